"""Runs the README's examples in Python, as jsii-rosetta translated them from TypeScript, and the README's own Python
examples (test/heavy/jsii/run.sh writes each to a file of the folder given as the first argument, named by its line), and
synthesizes what each built: the fixture's stack, or the stacks of the app a complete example makes (`app`).

Each example runs in a stack of its own, given what the TypeScript fixture (rosetta/default.ts-fixture) gives it:
stack (and self), vpc, file_system, my_security_group, analytics_security_group, datasets, site_bucket, shared and
clients, and
the library's and aws-cdk-lib's modules. Prints one line per example and ends with `readme: N passed, M failed`.
"""
import json
import pathlib
import sys
import traceback

import aws_cdk as cdk
from aws_cdk import Annotations, Duration, Stack
from aws_cdk import aws_autoscaling as autoscaling
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_efs as efs
from aws_cdk import aws_eks as eks
from aws_cdk import aws_s3 as s3
import cdk_efs_cache


def given(stack: Stack) -> dict:
    vpc = ec2.Vpc(stack, "FixtureVpc")
    shared = cdk_efs_cache.CachedFileSystem(stack, "FixtureShared", vpc=vpc,
                                            cache_fleet=cdk_efs_cache.CacheFleetOptions(
                                                fan_out=cdk_efs_cache.FanOut.route53(zone_name="fixture.internal")))
    names = {name: getattr(cdk_efs_cache, name) for name in dir(cdk_efs_cache) if not name.startswith("_")}
    names.update(
        cdk=cdk, Annotations=Annotations, Duration=Duration, Stack=Stack, autoscaling=autoscaling, ec2=ec2, ecs=ecs, efs=efs, eks=eks, s3=s3,
        stack=stack, self=stack, vpc=vpc,
        file_system=efs.FileSystem(stack, "FixtureFs", vpc=vpc),
        my_security_group=ec2.SecurityGroup(stack, "FixtureSg", vpc=vpc),
        analytics_security_group=ec2.SecurityGroup(stack, "FixtureSg2", vpc=vpc),
        datasets=s3.Bucket(stack, "FixtureBucket"),
        site_bucket=s3.Bucket(stack, "FixtureSiteBucket"),
        shared=shared,
        clients=shared.add_client_launch_template("FixtureClients"),
    )
    return names


def main() -> int:
    folder = pathlib.Path(sys.argv[1])
    passed = failed = 0
    for path in sorted(folder.glob("*.py")):
        app = cdk.App(outdir=str(folder / f"{path.stem}.out"))
        stack = Stack(app, "Readme")
        try:
            names = given(stack)
            exec(compile(path.read_text(), path.name, "exec"), names)
            own = names.get("app")
            if isinstance(own, cdk.App) and own is not app:
                # A complete example (fixture=imports) makes its own app: its stacks are the example's, each template
                # written beside the others as the TypeScript and Go runs write theirs.
                out = folder / f"{path.stem}.out"
                out.mkdir(parents=True, exist_ok=True)
                stacks = own.synth().stacks
                for s in stacks:
                    (out / f"{s.stack_name}.template.json").write_text(json.dumps(s.template))
                count = sum(len(s.template.get("Resources", {})) for s in stacks)
            else:
                count = len(app.synth().get_stack_by_name("Readme").template.get("Resources", {}))
            if not count:
                raise AssertionError("the example synthesized no resource")
            print(f"ok   README example at line {path.stem}: {count} resources")
            passed += 1
        except Exception:  # report every example, then fail
            print(f"FAIL README example at line {path.stem}:\n{path.read_text()}")
            traceback.print_exc()
            failed += 1
    if passed + failed == 0:
        print("FAIL no README example was found")
        failed += 1
    print(f"readme: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
