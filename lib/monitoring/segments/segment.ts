import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwactions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { acknowledgeCompliance } from '../../private/nag';

/**
 * One part of the dashboard, for one tier: its rows of widgets and its alarms. The dashboard adds the rows in its
 * order, and has each segment create its alarms through the dashboard's `DashboardAlarms`.
 */
export interface DashboardSegment {
  /** Rows of widgets, top to bottom: each row is one `Dashboard.addWidgets` call. */
  readonly rows: cloudwatch.IWidget[][];
  /** Creates the segment's alarms through `alarms`, which names, notifies and keeps them. */
  addAlarms(alarms: DashboardAlarms): void;
}

/** The settings of an alarm a segment creates (its metric and construct id are given apart). */
export type AlarmSettings = Omit<cloudwatch.CreateAlarmOptions, 'alarmName'>;

/**
 * The alarms of a dashboard: created in its scope with the construct id that names them (the names the docs use,
 * such as `MirrorFull` or `CacheNotServing1`), notifying `topic` when there is one, and kept in creation order.
 */
export class DashboardAlarms {
  /** Every alarm, in creation order (the inputs of composite alarms included). */
  public readonly alarms: cloudwatch.Alarm[] = [];
  /** Every composite alarm, in creation order. */
  public readonly compositeAlarms: cloudwatch.CompositeAlarm[] = [];
  private readonly byName = new Map<string, cloudwatch.AlarmBase>();

  constructor(private readonly scope: Construct, private readonly topic?: sns.ITopic) {}

  /** An alarm named `id` that notifies `topic`. */
  public alarm(id: string, metric: cloudwatch.IMetric, settings: AlarmSettings): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this.scope, id, { metric, ...settings });
    this.notify(alarm);
    return this.keep(id, alarm);
  }

  /** An alarm named `id` that notifies no one: an input of a composite alarm (`reason` says so to the compliance packs). */
  public input(id: string, metric: cloudwatch.IMetric, settings: AlarmSettings, reason: string): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this.scope, id, { metric, ...settings });
    acknowledgeCompliance(alarm, 'CloudWatchAlarmAction', reason);
    return this.keep(id, alarm);
  }

  /** A composite alarm named `id`, in alarm when all of `inputs` are, that notifies `topic`. */
  public allOf(id: string, inputs: cloudwatch.Alarm[], alarmDescription: string): cloudwatch.CompositeAlarm {
    const composite = new cloudwatch.CompositeAlarm(this.scope, id, {
      alarmRule: cloudwatch.AlarmRule.allOf(...inputs.map((a) => cloudwatch.AlarmRule.fromAlarm(a, cloudwatch.AlarmState.ALARM))),
      alarmDescription,
    });
    this.notify(composite);
    this.byName.set(id, composite);
    this.compositeAlarms.push(composite);
    return composite;
  }

  /** The alarm or composite alarm named `name`, if there is one. */
  public named(name: string): cloudwatch.AlarmBase | undefined {
    return this.byName.get(name);
  }

  /** The names of every alarm and composite alarm, in creation order. */
  public names(): string[] {
    return [...this.byName.keys()];
  }

  private keep(id: string, alarm: cloudwatch.Alarm): cloudwatch.Alarm {
    this.byName.set(id, alarm);
    this.alarms.push(alarm);
    return alarm;
  }

  /**
   * Sends the alarm's ALARM and OK transitions to `topic`, when there is one. Without one the alarm has no action,
   * which the compliance packs' `CloudWatchAlarmAction` reports: acknowledged on the alarm with that reason, so a
   * stack that follows the quick start passes them and the report still says why.
   */
  private notify(alarm: cloudwatch.AlarmBase): void {
    if (!this.topic) {
      acknowledgeCompliance(alarm, 'CloudWatchAlarmAction', 'No alarmTopic was given to the dashboard: the alarm ' +
        'shows its state on the dashboard and in the CloudWatch console and notifies no one. Pass alarmTopic (an SNS ' +
        'topic) to give every alarm of the dashboard ALARM and OK actions.');
      return;
    }
    alarm.addAlarmAction(new cwactions.SnsAction(this.topic));
    alarm.addOkAction(new cwactions.SnsAction(this.topic));
  }
}
