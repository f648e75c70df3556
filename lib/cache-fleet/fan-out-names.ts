import { Token } from 'aws-cdk-lib';
import { Construct, IConstruct } from 'constructs';
import { propError } from '../private/errors';

/**
 * Route 53 names the fleets of one app have claimed (private zones per VPC, record sets per zone), each with the path
 * of the fleet that claimed it: Route 53 refuses a second private zone of one name on a VPC, and a second record set
 * of one name in a zone, only at deploy time.
 */
const CLAIMED = new WeakMap<IConstruct, Map<string, string>>();

export function claimName(scope: Construct, fleet: string, key: string, prop: string, what: string, why: string): void {
  const root = scope.node.root;
  const claimed = CLAIMED.get(root) ?? new Map<string, string>();
  CLAIMED.set(root, claimed);
  const owner = claimed.get(key);
  if (owner !== undefined && owner !== fleet) throw propError(scope, prop, `${what} ${owner}: ${why}`);
  claimed.set(key, fleet);
}

/** A resource's id when it is known at synth, otherwise its construct path (the same object, the same path). */
export function idOrPath(id: string, construct: IConstruct): string {
  return Token.isUnresolved(id) ? `path ${construct.node.path}` : `id ${id}`;
}

export function normalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
