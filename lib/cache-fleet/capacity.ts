import { Duration, Size, Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { describeValue, knownAtSynth, propError } from '../private/errors';

/**
 * The most nodes one fixed fleet may have. The nodes share one launch template, so a node costs about 3.4 resources
 * (its group, its stable interface and its record in Route 53 mode) and 4.6 KB of template: measured with the sample's
 * dashboard, 100 nodes make 353 resources and 0.49 MB, 128 make 440 and 0.61 MB, 140 make 477, near CloudFormation's
 * 500 resources per stack.
 */
const MAX_NODES = 128;

/** Options of `Capacity.elastic()`: one Auto Scaling group of `minNodes` to `maxNodes` nodes behind the load balancer. */
export interface ElasticCapacityOptions {
  /**
   * The fewest nodes: the group's minimum, and how many nodes CloudFormation waits for on the first deployment.
   *
   * @default 2
   */
  readonly minNodes?: number;

  /** The most nodes, at least `minNodes`. The template's size does not grow with it. */
  readonly maxNodes: number;

  /**
   * The bytes per second a node should send on average (EC2's NetworkOut, averaged over the group).
   * Above it, target tracking adds nodes, several at once when demand jumps.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/elastic-fleet.md
   * @default Size.gibibytes(2) - a second, about 17 Gbps: a starting point, not a measured optimum
   */
  readonly targetNetworkOutPerNode?: Size;

  /**
   * How long the average must stay below half of `targetNetworkOutPerNode` before one node is removed, and between removals.
   * A warm cache is expensive to rebuild, so the fleet shrinks one node at a time.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/elastic-fleet.md
   * @default Duration.minutes(30)
   */
  readonly scaleInCooldown?: Duration;

  /**
   * How long a node that is being removed may take to drain: the timeout of the group's terminate lifecycle hook.
   * Its clients reconnect through the load balancer to another node.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/elastic-fleet.md
   * @default Duration.minutes(2)
   */
  readonly drainTimeout?: Duration;
}

/**
 * How many nodes a cache fleet has: a fixed number, or one Auto Scaling group that grows and shrinks.
 * One value, so that the options of an elastic fleet cannot be given to a fixed one.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/elastic-fleet.md
 */
export class Capacity {
  /**
   * A fixed fleet of `count` nodes, 1 to 128, each an Auto Scaling group of one.
   * 128 nodes with the dashboard make 440 of CloudFormation's 500 resources per stack.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   */
  public static nodes(count: number): Capacity {
    return new Capacity(count, undefined);
  }

  /** An elastic fleet: one Auto Scaling group of `minNodes` to `maxNodes` nodes behind the load balancer. */
  public static elastic(options: ElasticCapacityOptions): Capacity {
    return new Capacity(undefined, { ...options });
  }

  /**
   * The number of nodes of a fixed fleet; undefined for an elastic fleet.
   *
   * @internal
   */
  public readonly _nodeCount?: number;

  /**
   * The options of an elastic fleet; undefined for a fixed fleet.
   *
   * @internal
   */
  public readonly _elastic?: ElasticCapacityOptions;

  private constructor(nodeCount: number | undefined, elastic: ElasticCapacityOptions | undefined) {
    this._nodeCount = nodeCount;
    this._elastic = elastic;
  }
}

/**
 * The capacity given as `capacity` (`defaultCapacity` when not given), with a fixed fleet's node count checked (an
 * elastic fleet's options are checked with the rest of the fleet, `validateElastic`). From JavaScript, which has no
 * types, anything else is refused.
 */
export function resolveCapacity(scope: IConstruct, capacity: Capacity | undefined, defaultCapacity: Capacity): Capacity {
  if (capacity === undefined || capacity === null) return defaultCapacity;
  if (!(capacity instanceof Capacity)) {
    throw propError(scope, 'capacity', `must be Capacity.nodes(count) or Capacity.elastic({ maxNodes }), got ${describeValue(capacity, scope)}.`);
  }
  const n = capacity._nodeCount;
  if (n === undefined) return capacity;
  knownAtSynth(scope, 'capacity', n, 'each node is an Auto Scaling group of its own');
  if (n < 1) throw propError(scope, 'capacity', `a cache fleet needs at least one node, got ${n}.`);
  if (!Token.isUnresolved(n) && n > MAX_NODES) {
    throw propError(scope, 'capacity', `at most ${MAX_NODES} nodes fit in one stack, got ${n}: each node adds its ` +
      'Auto Scaling group, stable interface and record, and 128 nodes with the dashboard already make 440 of ' +
      'CloudFormation\'s 500 resources per stack. Split a larger fleet over several CacheFleets in separate stacks ' +
      '(each with FanOut.route53({ zoneName }) of its own, or one shared hostedZone with a recordName each).');
  }
  if (!Number.isInteger(n)) throw propError(scope, 'capacity', `must be a whole number from 1 to ${MAX_NODES}, got ${n}.`);
  return capacity;
}
