import { Stack, Validations } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/*
 * cdk-nag acknowledgements shared by every construct (cdk-nag 3.x, through `Validations`).
 *
 * - A finding about one resource of a policy (AwsSolutions-IAM5) is named by the resource as it stands in the
 *   synthesized template, flattened the way cdk-nag flattens it: `arn:<AWS::Partition>:ec2:<AWS::Region>:...` in an
 *   env-agnostic stack, `arn:aws:ec2:eu-central-1:...` in a stack with an explicit region (and account), an
 *   export's name for a value of another stack. So the id is built from the resolved value, never written out.
 * - The compliance packs that report the same rule under their own names (NIST 800-53 R5 and HIPAA Security share
 *   the rules the library acknowledges) get one acknowledgement each, with the same reason.
 */

/** The text cdk-nag (3.x `flattenCfnReference`) makes of a CloudFormation value: `Ref`s and `GetAtt`s as `<...>`. */
function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (node && typeof node === 'object' && !Array.isArray(node)) {
    const o = node as Record<string, unknown>;
    if (o['Fn::Join']) {
      const [sep, items] = o['Fn::Join'] as [string, unknown[]];
      return items.map(flatten).join(sep);
    }
    if (o['Fn::Sub']) return flatten(o['Fn::Sub']);
    if (o['Fn::GetAtt']) {
      const [res, attr] = o['Fn::GetAtt'] as [unknown, unknown];
      return `<${flatten(res)}.${flatten(attr)}>`;
    }
    if (o['Fn::ImportValue']) return flatten(o['Fn::ImportValue']);
    if (o.Ref) return `<${flatten(o.Ref)}>`;
  }
  return JSON.stringify(node);
}

/** A value (an ARN, possibly with tokens) as cdk-nag names it in a finding of `scope`'s stack. */
export function nagText(scope: IConstruct, value: string): string {
  return flatten(Stack.of(scope).resolve(value));
}

/**
 * Acknowledges AwsSolutions-IAM5 for one resource of the policies on `scope` (a role), named as the template will
 * name it: in the stack's own partition, region and account when they are concrete, as `<AWS::Region>` and the like
 * when they are not. A value of another stack becomes an import only when the app is synthesized, so the id is
 * checked again then (after cross-stack references are resolved, before cdk-nag runs) and acknowledged as it reads.
 */
export function acknowledgeWildcardResource(scope: IConstruct, resource: string, reason: string): void {
  const now = `AwsSolutions-IAM5[Resource::${nagText(scope, resource)}]`;
  Validations.of(scope).acknowledge({ id: now, reason });
  scope.node.addValidation({
    validate: () => {
      const atSynth = `AwsSolutions-IAM5[Resource::${nagText(scope, resource)}]`;
      if (atSynth !== now) Validations.of(scope).acknowledge({ id: atSynth, reason });
      return [];
    },
  });
}

/**
 * The rules of cdk-nag's NIST 800-53 R5 pack the library acknowledges, which its HIPAA Security pack reports too,
 * under the same rule name.
 */
export type ComplianceRule = 'EFSInBackupPlan' | 'CloudWatchAlarmAction' | 'ELBLoggingEnabled' | 'ELBDeletionProtectionEnabled'
| 'ELBv2ACMCertificateRequired';

/** The compliance packs whose findings `acknowledgeCompliance` acknowledges, by their rule-id prefix. */
export const COMPLIANCE_PACKS = ['NIST.800.53.R5', 'HIPAA.Security'] as const;

/** Acknowledges one rule of the compliance packs (NIST 800-53 R5, HIPAA Security) on `scope`, with one reason. */
export function acknowledgeCompliance(scope: IConstruct, rule: ComplianceRule, reason: string): void {
  Validations.of(scope).acknowledge(...COMPLIANCE_PACKS.map((pack) => ({ id: `${pack}-${rule}`, reason })));
}
