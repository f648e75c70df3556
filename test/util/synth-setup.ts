/**
 * Set up for the runs that synthesize in-process (the unit, lab and emulator jest runs through `setupFiles`, and the
 * gates by import): aws-cdk-lib's built-in CloudFormation validation is off.
 *
 * That validation is a WebAssembly rule engine run on every template at every `app.synth()`. Without
 * `@aws-cdk/core:validateAgainstDefaultRules` in the app's context (these tests' apps do not set it), its errors are
 * downgraded to warnings in a report file that nothing reads, so it asserted nothing here. It took 70 % of the unit
 * tests' time (143 s against 43 s on two cores, measured alone). The checks that do assert stay: the sample app's
 * `cdk synth` in the packed-library step runs it with cdk.json's `validateAgainstDefaultRules` (an error fails the
 * step), and the gates hold every template of the configuration matrix to cfn-lint.
 */
process.env.CDK_VALIDATION = 'false';
