import { Lazy, Resource } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';

/**
 * The launch template's user data: the rendered bootstrap, then the commands added to it. Commands added to it (by you,
 * or by aws-cdk-lib: an ECS cluster that takes the instances as capacity adds its `ECS_CLUSTER` line) join the
 * commands of `FsCacheClientLaunchTemplate.userData`, run on the first boot after the bootstrap succeeded.
 */
export class RenderedUserData extends ec2.UserData {
  /** Commands that arrive with a deploy-time value spliced in, and the lines that add them with the value as data. */
  private readonly replacements = new Map<string, string[]>();
  private wrapper?: (script: string) => string;

  constructor(private readonly produce: () => string, private readonly commands: ec2.UserData) {
    super();
  }

  /** Adds `lines` instead of `command` whenever `command` is added. */
  public _replace(command: string, lines: string[]): void {
    this.replacements.set(command, lines);
  }

  /** Renders the user data as `wrap` makes it of the script (an EKS node's MIME document). */
  public _wrap(wrap: (script: string) => string): void {
    this.wrapper = wrap;
  }

  public render(): string {
    return Lazy.string({ produce: () => (this.wrapper ? this.wrapper(this.produce()) : this.produce()) });
  }

  public addCommands(...commands: string[]): void {
    this.commands.addCommands(...commands.flatMap((c) => this.replacements.get(c) ?? [c]));
  }

  public addOnExitCommands(...commands: string[]): void {
    this.commands.addOnExitCommands(...commands);
  }

  public addExecuteFileCommand(params: ec2.ExecuteFileOptions): void {
    this.commands.addExecuteFileCommand(params);
  }

  public addS3DownloadCommand(params: ec2.S3DownloadOptions): string {
    return this.commands.addS3DownloadCommand(params);
  }

  public addSignalOnExitCommand(resource: Resource): void {
    this.commands.addSignalOnExitCommand(resource);
  }
}
