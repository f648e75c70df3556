// Runs the README's examples in Go: the README's own Go examples, or jsii-rosetta's Go translations of its
// TypeScript ones. test/heavy/jsii/run.sh writes each into a file of this package, example_LINE.go, from example.go.in: the
// example's code becomes the body of a function given what the TypeScript fixture (rosetta/default.ts-fixture) gives
// (stack and this, vpc, fileSystem, mySecurityGroup, analyticsSecurityGroup, datasets, siteBucket, shared, clients).
//
// Each example runs in a stack of its own and is synthesized into a folder of the one given as the first argument.
// Prints one line per example and ends with `readme-go: N passed, M failed`.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsefs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdk-efs-cache/cdk-efs-cache-go/cdkefscache"
)

type example struct {
	line string
	run  func(stack awscdk.Stack, this awscdk.Stack, vpc awsec2.Vpc, fileSystem awsefs.FileSystem,
		mySecurityGroup awsec2.SecurityGroup, analyticsSecurityGroup awsec2.SecurityGroup, datasets awss3.Bucket,
		siteBucket awss3.Bucket, shared cdkefscache.CachedFileSystem, clients cdkefscache.FsCacheClientLaunchTemplate) awscdk.App
}

// Filled by the init functions of the example files.
var examples []example

// synth runs one example in a stack of its own and returns how many resources the stack synthesized.
func synth(e example, outdir string) (resources int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outdir)})
	stack := awscdk.NewStack(app, jsii.String("Readme"), nil)
	vpc := awsec2.NewVpc(stack, jsii.String("FixtureVpc"), nil)
	shared := cdkefscache.NewCachedFileSystem(stack, jsii.String("FixtureShared"), &cdkefscache.CachedFileSystemProps{
		Vpc: vpc,
		CacheFleet: &cdkefscache.CacheFleetOptions{
			FanOut: cdkefscache.FanOut_Route53(&cdkefscache.Route53FanOutOptions{ZoneName: jsii.String("fixture.internal")}),
		},
	})
	own := e.run(stack, stack, vpc,
		awsefs.NewFileSystem(stack, jsii.String("FixtureFs"), &awsefs.FileSystemProps{Vpc: vpc}),
		awsec2.NewSecurityGroup(stack, jsii.String("FixtureSg"), &awsec2.SecurityGroupProps{Vpc: vpc}),
		awsec2.NewSecurityGroup(stack, jsii.String("FixtureSg2"), &awsec2.SecurityGroupProps{Vpc: vpc}),
		awss3.NewBucket(stack, jsii.String("FixtureBucket"), nil),
		awss3.NewBucket(stack, jsii.String("FixtureSiteBucket"), nil),
		shared,
		shared.AddClientLaunchTemplate(jsii.String("FixtureClients"), nil))
	if own == nil {
		template, _ := app.Synth(nil).GetStackByName(jsii.String("Readme")).Template().(map[string]interface{})
		found, _ := template["Resources"].(map[string]interface{})
		resources = len(found)
	} else {
		// A complete example makes its own app (and ends by returning it, see go_examples.js): its stacks are the
		// example's, each template written into outdir as the TypeScript and Python runs write theirs.
		if err := os.MkdirAll(outdir, 0o755); err != nil {
			return 0, err
		}
		for _, s := range *own.Synth(nil).Stacks() {
			template, _ := s.Template().(map[string]interface{})
			found, _ := template["Resources"].(map[string]interface{})
			resources += len(found)
			text, err := json.Marshal(template)
			if err != nil {
				return 0, err
			}
			if err := os.WriteFile(filepath.Join(outdir, *s.StackName()+".template.json"), text, 0o644); err != nil {
				return 0, err
			}
		}
	}
	if resources == 0 {
		return 0, errors.New("the example synthesized no resource")
	}
	return resources, nil
}

func main() {
	passed, failed := 0, 0
	sort.Slice(examples, func(i, j int) bool { return examples[i].line < examples[j].line })
	for _, e := range examples {
		if n, err := synth(e, filepath.Join(os.Args[1], e.line)); err != nil {
			fmt.Printf("FAIL README example at line %s: %v\n", e.line, err)
			failed++
		} else {
			fmt.Printf("ok   README example at line %s: %d resources\n", e.line, n)
			passed++
		}
	}
	jsii.Close()
	if passed+failed == 0 {
		fmt.Println("FAIL no README example was found")
		failed++
	}
	fmt.Printf("readme-go: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
