import { IConstruct } from 'constructs';
import { describeValue, propError } from '../private/errors';
import { NetworkLoadBalancerFanOutOptions, Route53FanOutOptions } from './fan-out-options';
import { validateNetworkLoadBalancer, validateRoute53 } from './fan-out-validation';

/**
 * How clients reach a fleet's nodes: Route 53 names over their stable addresses, or an internal Network Load Balancer.
 * Route 53 costs nothing per GB and adds no hop; a load balancer takes unhealthy nodes out of rotation by itself.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
 */
export class FanOut {
  /** Route 53 names over the nodes' stable addresses. */
  public static route53(options: Route53FanOutOptions = {}): FanOut {
    return new FanOut({ ...options }, undefined);
  }

  /** An internal Network Load Balancer in front of the nodes. */
  public static networkLoadBalancer(options: NetworkLoadBalancerFanOutOptions = {}): FanOut {
    return new FanOut(undefined, { ...options });
  }

  /**
   * The options of the Route 53 fan-out; undefined for a load balancer.
   *
   * @internal
   */
  public readonly _route53?: Route53FanOutOptions;

  /**
   * The options of the load balancer; undefined for Route 53.
   *
   * @internal
   */
  public readonly _networkLoadBalancer?: NetworkLoadBalancerFanOutOptions;

  private constructor(route53Options?: Route53FanOutOptions, nlbOptions?: NetworkLoadBalancerFanOutOptions) {
    this._route53 = route53Options;
    this._networkLoadBalancer = nlbOptions;
  }

  /**
   * Throws `Invalid <prop>.<option>:` naming `scope` when an option cannot be used.
   *
   * @internal
   */
  public _validate(scope: IConstruct, prop: string): void {
    if (this._route53) validateRoute53(scope, prop, this._route53);
    if (this._networkLoadBalancer) validateNetworkLoadBalancer(scope, prop, this._networkLoadBalancer);
  }
}

/**
 * The value of the `fanOut` prop, checked: the default when it is not given, `Invalid fanOut:` when it is not a
 * `FanOut` (from JavaScript, which has no types: a `FanOutMode` value, which the message translates), `Invalid fanOut.<option>:` when an option cannot be used.
 */
export function resolveFanOut(scope: IConstruct, fanOut: FanOut | undefined, defaultFanOut: FanOut): FanOut {
  if (fanOut === undefined || fanOut === null) return defaultFanOut;
  if (!(fanOut instanceof FanOut)) {
    throw propError(scope, 'fanOut', `must be FanOut.route53() or FanOut.networkLoadBalancer(), got ${describeValue(fanOut, scope)}. ` +
      'FanOutMode.ROUTE53 is FanOut.route53(), FanOutMode.NETWORK_LOAD_BALANCER is FanOut.networkLoadBalancer().');
  }
  fanOut._validate(scope, 'fanOut');
  return fanOut;
}
