import * as ec2 from 'aws-cdk-lib/aws-ec2';

/**
 * Lets `consumer` reach `producer` on `port`, with both rules made from the consumer's side: the ingress rule into
 * each of the producer's groups, and the consumer's own egress rule unless its group allows all outbound traffic.
 *
 * In one stack the rules are what `producer.connections.allowFrom(consumer, port)` makes (the same resources, ids
 * and descriptions). When the producer's group is of another stack, aws-cdk puts a rule made from the consumer's
 * side (a "remote" rule) in the consumer's stack, as its own constructs do: the consumer's stack then depends on the
 * producer's (it does anyway: it mounts the producer), and the producer's never on the consumer's, so tiers in stacks
 * of their own make no dependency cycle. Rules made from the producer's side would land in the producer's stack and
 * point back at the consumer's group.
 */
export function allowFromConsumerSide(consumer: ec2.IConnectable, producer: ec2.IConnectable, port: ec2.Port, description: string): void {
  for (const into of producer.connections.securityGroups) {
    for (const from of consumer.connections.securityGroups) {
      into.addIngressRule(from, port, description, true);
      // A group that allows all outbound traffic needs no rule (aws-cdk would warn that it ignores one).
      if (!from.allowAllOutbound) from.addEgressRule(into, port, description);
    }
  }
}
