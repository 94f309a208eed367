import { randomBytes } from 'node:crypto';
import type { Logger } from '../log/index.ts';
import type { Client, ObjectLike } from './client/types.ts';
import { CoreKinds } from './kinds.ts';

export interface RecordedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * Writes core/v1 Events about objects (what `kubectl describe` and `kubectl get events` show).
 * Events outlive the object they are about, which is why a released finalizer is reported here.
 */
export class EventRecorder {
  private readonly client: Client;
  private readonly component: string;
  private readonly instance: string;
  private readonly logger: Logger | undefined;

  constructor(client: Client, component: string, instance: string, logger?: Logger) {
    this.client = client;
    this.component = component;
    this.instance = instance;
    this.logger = logger;
  }

  /** Records the event; failures are logged, never thrown (an event is not worth failing a reconcile). */
  async record(obj: ObjectLike, ev: RecordedEvent): Promise<void> {
    const namespace = obj.metadata?.namespace ?? 'default';
    const now = new Date().toISOString();
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${obj.metadata?.name}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata?.name,
        namespace,
        uid: obj.metadata?.uid,
        resourceVersion: obj.metadata?.resourceVersion,
      },
      type: ev.type,
      reason: ev.reason,
      message: ev.message.slice(0, 1024),
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    try {
      await this.client.create(CoreKinds.Event, body);
    } catch (err) {
      this.logger?.warn({ err, reason: ev.reason, object: obj.metadata?.name }, 'could not record event');
    }
  }
}
