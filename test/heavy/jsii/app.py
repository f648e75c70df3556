"""The sample stack (bin/sample-stack.ts) written in Python against the generated cdk-efs-cache package.

Synthesizes one stack, EfsCacheSample, into the folder given as the first argument: test/heavy/jsii/run.sh compares its
resources with the TypeScript sample's. Environment-agnostic and lookup-free, like the TypeScript app, and of the same
sizes: the trial size by default, the library's default types with the context value size=production (as with
`cdk synth -c size=production`, which hands it to the app in CDK_CONTEXT_JSON).
"""
import json
import sys

import aws_cdk as cdk
from aws_cdk import aws_autoscaling as autoscaling
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from constructs import Construct

from cdk_efs_cache import CacheFleetOptions, CacheDashboardOptions, CachedFileSystem, Capacity

# The instance types of each size of the sample (bin/sample-stack.ts SampleSize), the cache nodes' and the clients':
# None is the library's default (c7gn.16xlarge nodes, m6id.xlarge clients).
SIZES = {
    "trial": ("c7gn.large", "m6id.large"),
    "production": (None, None),
}


def sample_size(value: object) -> str:
    """The size named by the context value `size`: trial when it is not given; anything else but production fails."""
    if value is None:
        return "trial"
    if isinstance(value, str) and value in SIZES:
        return value
    raise ValueError(f"Invalid size: {json.dumps(value)} is not a size of the sample stack (the context value "
                     "-c size=..., or SampleStackProps.size): give 'trial' (the default) or 'production'.")


def instance_type(name: "str | None") -> "ec2.InstanceType | None":
    """The instance type named, or None for the library's default."""
    return ec2.InstanceType(name) if name else None


class SampleStack(cdk.Stack):
    """A VPC over two AZs, a CachedFileSystem with two cache nodes, and an Auto Scaling group of FS-Cache clients."""

    def __init__(self, scope: Construct, construct_id: str, *, size: str = "trial", **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)
        nodes, clients_type = SIZES[sample_size(size)]
        key = kms.Key(self, "Key",
            description="Encrypts the VPC flow logs and the alarm topic of the cdk-efs-cache sample",
            enable_key_rotation=True)
        key.add_to_resource_policy(iam.PolicyStatement(
            principals=[iam.ServicePrincipal(f"logs.{cdk.Aws.REGION}.amazonaws.com")],
            actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
            resources=["*"],
            conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn":
                f"arn:{cdk.Aws.PARTITION}:logs:{cdk.Aws.REGION}:{cdk.Aws.ACCOUNT_ID}:log-group:*"}}))
        key.add_to_resource_policy(iam.PolicyStatement(
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"]))
        alarm_topic = sns.Topic(self, "Alarms", master_key=key, enforce_ssl=True)
        flow_log_group = logs.LogGroup(self, "FlowLogs", retention=logs.RetentionDays.ONE_MONTH, encryption_key=key)
        flow_log_policy = iam.ManagedPolicy(self, "FlowLogsPolicy",
            description="VPC flow logs of the cdk-efs-cache sample: write to their log group",
            statements=[iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                resources=[flow_log_group.log_group_arn])])
        flow_log_role = iam.Role(self, "FlowLogsRole",
            assumed_by=iam.ServicePrincipal("vpc-flow-logs.amazonaws.com"),
            managed_policies=[flow_log_policy])
        vpc = ec2.Vpc(self, "Vpc",
            max_azs=2,
            nat_gateways=1,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=24,
                                        map_public_ip_on_launch=False),
                ec2.SubnetConfiguration(name="private", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS, cidr_mask=20),
            ],
            flow_logs={"all": ec2.FlowLogOptions(destination=ec2.FlowLogDestination.to_cloud_watch_logs(
                flow_log_group, flow_log_role.without_policy_updates()))})

        cached = CachedFileSystem(self, "SharedData",
            vpc=vpc,
            cache_fleet=CacheFleetOptions(capacity=Capacity.nodes(2), instance_type=instance_type(nodes)),
            monitoring=CacheDashboardOptions(alarm_topic=alarm_topic))
        clients = cached.add_client_launch_template("Clients", instance_type=instance_type(clients_type))
        autoscaling.AutoScalingGroup(self, "ClientGroup",
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            launch_template=clients.launch_template,
            min_capacity=1,
            max_capacity=4)


def main() -> None:
    app = cdk.App(outdir=sys.argv[1])
    SampleStack(app, "EfsCacheSample",
                description="cdk-efs-cache sample: EFS with a RAM cache tier and FS-Cache clients",
                size=sample_size(app.node.try_get_context("size")))
    app.synth()


if __name__ == "__main__":
    main()
