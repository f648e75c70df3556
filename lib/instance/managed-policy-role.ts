import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/**
 * An `iam.Role` whose own permissions live in one customer managed policy (`<role>/Policy`) instead of the inline
 * `DefaultPolicy` of `iam.Role`: every statement added with `addToPrincipalPolicy`, and so every `grant*()` made to
 * the role (by this library, by aws-cdk-lib or by the user), lands in that policy, scoped exactly as given.
 *
 * The role lists the policy in its ManagedPolicyArns, so CloudFormation creates the policy before the role, and
 * whatever uses the role (instance profile, launch template, instance) starts with its permissions in place. A
 * statement must therefore not name the role itself (that would be a circular dependency); none here does.
 */
export class ManagedPolicyRole extends iam.Role {
  private policy?: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: iam.RoleProps) {
    super(scope, id, props);
  }

  public addToPrincipalPolicy(statement: iam.PolicyStatement): iam.AddToPrincipalPolicyResult {
    if (!this.policy) {
      this.policy = new iam.ManagedPolicy(this, 'Policy', { description: `Permissions of ${this.node.path}` });
      this.addManagedPolicy(this.policy);
    }
    this.policy.addStatements(statement);
    return { statementAdded: true, policyDependable: this.policy };
  }

  public addToPolicy(statement: iam.PolicyStatement): boolean {
    return this.addToPrincipalPolicy(statement).statementAdded;
  }
}
