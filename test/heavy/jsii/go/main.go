// The sample stack (bin/sample-stack.ts) written in Go against the generated cdk-efs-cache module
// (dist/packages/go/cdkefscache, which go.mod's replace directive points to).
//
// Synthesizes one stack, EfsCacheSample, into the folder given as the first argument: test/heavy/jsii/run.sh compares its
// resources with the TypeScript sample's. Environment-agnostic and lookup-free, like the TypeScript app, and of the
// same sizes: the trial size by default, the library's default types with the context value size=production (as with
// `cdk synth -c size=production`, which hands it to the app in CDK_CONTEXT_JSON).
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsautoscaling"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdk-efs-cache/cdk-efs-cache-go/cdkefscache"
)

// SampleStackProps are a stack's props and the sample's size, "trial" (also when empty) or "production".
type SampleStackProps struct {
	awscdk.StackProps
	Size string
}

// sampleTypes returns the instance types of a size of the sample (bin/sample-stack.ts SampleSize), the cache nodes'
// and the clients': nil is the library's default (c7gn.16xlarge nodes, m6id.xlarge clients).
func sampleTypes(size string) (nodes awsec2.InstanceType, clients awsec2.InstanceType) {
	if size == "production" {
		return nil, nil
	}
	return awsec2.NewInstanceType(jsii.String("c7gn.large")), awsec2.NewInstanceType(jsii.String("m6id.large"))
}

// sampleSize returns the size named by the context value size: "trial" when it is not given, an error for anything
// but "trial" and "production".
func sampleSize(value interface{}) (string, error) {
	if p, ok := value.(*string); ok && p != nil {
		value = *p
	}
	switch value {
	case nil:
		return "trial", nil
	case "trial", "production":
		return value.(string), nil
	}
	shown, _ := json.Marshal(value)
	return "", fmt.Errorf("Invalid size: %s is not a size of the sample stack (the context value -c size=..., or "+
		"SampleStackProps.size): give 'trial' (the default) or 'production'.", shown)
}

// NewSampleStack builds a VPC over two AZs, a CachedFileSystem with two cache nodes, and an Auto Scaling group of
// FS-Cache clients.
func NewSampleStack(scope constructs.Construct, id string, props *SampleStackProps) awscdk.Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)
	nodeType, clientType := sampleTypes(props.Size)
	key := awskms.NewKey(stack, jsii.String("Key"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the VPC flow logs and the alarm topic of the cdk-efs-cache sample"),
		EnableKeyRotation: jsii.Bool(true),
	})
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: &[]awsiam.IPrincipal{
			awsiam.NewServicePrincipal(jsii.String(fmt.Sprintf("logs.%s.amazonaws.com", *awscdk.Aws_REGION())), nil),
		},
		Actions:   jsii.Strings("kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"),
		Resources: jsii.Strings("*"),
		Conditions: &map[string]interface{}{"ArnLike": map[string]interface{}{
			"kms:EncryptionContext:aws:logs:arn": fmt.Sprintf("arn:%s:logs:%s:%s:log-group:*",
				*awscdk.Aws_PARTITION(), *awscdk.Aws_REGION(), *awscdk.Aws_ACCOUNT_ID()),
		}},
	}), nil)
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
		Resources:  jsii.Strings("*"),
	}), nil)
	alarmTopic := awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{
		MasterKey:  key,
		EnforceSSL: jsii.Bool(true),
	})
	flowLogGroup := awslogs.NewLogGroup(stack, jsii.String("FlowLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		EncryptionKey: key,
	})
	flowLogPolicy := awsiam.NewManagedPolicy(stack, jsii.String("FlowLogsPolicy"), &awsiam.ManagedPolicyProps{
		Description: jsii.String("VPC flow logs of the cdk-efs-cache sample: write to their log group"),
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"),
			Resources: &[]*string{flowLogGroup.LogGroupArn()},
		})},
	})
	flowLogRole := awsiam.NewRole(stack, jsii.String("FlowLogsRole"), &awsiam.RoleProps{
		AssumedBy:       awsiam.NewServicePrincipal(jsii.String("vpc-flow-logs.amazonaws.com"), nil),
		ManagedPolicies: &[]awsiam.IManagedPolicy{flowLogPolicy},
	})
	vpc := awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
		MaxAzs:      jsii.Number(2),
		NatGateways: jsii.Number(1),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24),
				MapPublicIpOnLaunch: jsii.Bool(false)},
			{Name: jsii.String("private"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(20)},
		},
		FlowLogs: &map[string]*awsec2.FlowLogOptions{"all": {
			Destination: awsec2.FlowLogDestination_ToCloudWatchLogs(flowLogGroup, flowLogRole.WithoutPolicyUpdates(nil)),
		}},
	})

	cached := cdkefscache.NewCachedFileSystem(stack, jsii.String("SharedData"), &cdkefscache.CachedFileSystemProps{
		Vpc:        vpc,
		CacheFleet: &cdkefscache.CacheFleetOptions{Capacity: cdkefscache.Capacity_Nodes(jsii.Number(2)), InstanceType: nodeType},
		Monitoring: &cdkefscache.CacheDashboardOptions{AlarmTopic: alarmTopic},
	})
	clients := cached.AddClientLaunchTemplate(jsii.String("Clients"), &cdkefscache.ClientLaunchTemplateOptions{
		InstanceType: clientType,
	})
	awsautoscaling.NewAutoScalingGroup(stack, jsii.String("ClientGroup"), &awsautoscaling.AutoScalingGroupProps{
		Vpc:            vpc,
		VpcSubnets:     &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
		LaunchTemplate: clients.LaunchTemplate(),
		MinCapacity:    jsii.Number(1),
		MaxCapacity:    jsii.Number(4),
	})
	return stack
}

func main() {
	defer jsii.Close()
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sample OUTDIR")
		os.Exit(2)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(os.Args[1])})
	size, err := sampleSize(app.Node().TryGetContext(jsii.String("size")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		jsii.Close()
		os.Exit(1)
	}
	NewSampleStack(app, "EfsCacheSample", &SampleStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("cdk-efs-cache sample: EFS with a RAM cache tier and FS-Cache clients"),
		},
		Size: size,
	})
	app.Synth(nil)
}
