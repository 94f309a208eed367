import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventQueueStats } from '../engine/event-queue.ts';
import type { InformerCache } from '../kube/cache.ts';
import type { Controller, ControllerMetricsSink, ReconcileOutcome } from '../kube/controller.ts';

/**
 * The controller's Prometheus metrics (served on the metrics port beside the process's unprefixed
 * `process_*` / `nodejs_*` metrics of pkg/http). Counters end in `_total`; state is a gauge.
 */
export class ControllerMetrics implements ControllerMetricsSink {
  readonly registry: Registry;
  private readonly total: Counter<'controller' | 'result'>;
  private readonly errors: Counter<'controller'>;
  private readonly panics: Counter<'controller'>;
  private readonly duration: Histogram<'controller'>;
  private readonly purge: Histogram<'complete'>;
  private readonly controllers: Controller[] = [];
  private runningQueries: () => number = () => 0;
  private engineEvents: () => EventQueueStats | undefined = () => undefined;

  constructor(opts: {
    cache: InformerCache;
    isLeader: () => boolean;
    registry?: Registry;
  }) {
    // The gauges' collect() has the gauge as `this`: reach the tracked state through closures.
    const controllers = this.controllers;
    const running = () => this.runningQueries();
    const events = () => this.engineEvents();
    const registry = opts.registry ?? new Registry();
    this.registry = registry;
    const registers = [registry];
    this.total = new Counter({
      name: 'berth_controller_reconcile_total',
      help: 'Reconciles by controller and result (success, requeue, requeue_after, error, terminal, panic)',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.errors = new Counter({
      name: 'berth_controller_reconcile_errors_total',
      help: 'Reconciles that failed (errors, terminal errors and panics)',
      labelNames: ['controller'],
      registers,
    });
    this.panics = new Counter({
      name: 'berth_controller_reconcile_panics_total',
      help: 'Reconciles that threw a programming error (caught and requeued)',
      labelNames: ['controller'],
      registers,
    });
    this.duration = new Histogram({
      name: 'berth_controller_reconcile_duration_seconds',
      help: 'Time per reconcile',
      labelNames: ['controller'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.purge = new Histogram({
      name: 'berth_controller_query_purge_seconds',
      help: 'From Query deletion to finalizer release; complete=false when released after the grace period',
      labelNames: ['complete'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 900],
      registers,
    });
    new Gauge({
      name: 'berth_controller_workqueue_depth',
      help: 'Keys waiting for a worker',
      labelNames: ['controller'],
      registers,
      collect() {
        for (const c of controllers) this.set({ controller: c.name }, c.queue.depth);
      },
    });
    new Gauge({
      name: 'berth_controller_informer_last_event_age_seconds',
      help: 'Seconds since the informer last received a list, watch event or bookmark',
      labelNames: ['resource'],
      registers,
      collect() {
        for (const h of opts.cache.health()) {
          if (h.lastEventAgeMs !== null) this.set({ resource: h.name }, h.lastEventAgeMs / 1000);
        }
      },
    });
    new Counter({
      name: 'berth_controller_informer_restarts_total',
      help: 'Times the informer stopped on an error and was restarted',
      labelNames: ['resource'],
      registers,
      collect() {
        // The supervisor keeps the running count: expose it as the counter's value.
        this.reset();
        for (const h of opts.cache.health()) this.inc({ resource: h.name }, h.restarts);
      },
    });
    new Gauge({
      name: 'berth_controller_leader',
      help: '1 while this process holds the leader lease',
      registers,
      collect() {
        this.set(opts.isLeader() ? 1 : 0);
      },
    });
    new Counter({
      name: 'berth_controller_engine_events_total',
      help: 'Operation events the engine handed to the broker, by outcome: sent, dropped (queue full or engine closed), failed (given up after retries)',
      labelNames: ['outcome'],
      registers,
      collect() {
        const s = events();
        if (!s) return;
        this.reset();
        for (const outcome of ['sent', 'dropped', 'failed'] as const) this.inc({ outcome }, s[outcome]);
      },
    });
    new Gauge({
      name: 'berth_controller_engine_events_pending',
      help: 'Operation events waiting in the engine queue (queued) or in a request to the broker (in_flight)',
      labelNames: ['state'],
      registers,
      collect() {
        const s = events();
        if (!s) return;
        this.set({ state: 'queued' }, s.queued);
        this.set({ state: 'in_flight' }, s.inFlight);
      },
    });
    new Gauge({
      name: 'berth_controller_queries_running',
      help: 'Engine runs in flight in this process',
      registers,
      collect() {
        this.set(running());
      },
    });
  }

  /** Where the engine's event-delivery metrics read from (the engine's own counters). */
  countEngineEvents(stats: () => EventQueueStats | undefined): void {
    this.engineEvents = stats;
  }

  /** Adds a controller's work queue to the depth gauge. */
  track(controller: Controller): Controller {
    this.controllers.push(controller);
    return controller;
  }

  /** Where the running-queries gauge reads from. */
  countRunningQueries(count: () => number): void {
    this.runningQueries = count;
  }

  reconciled(controller: string, outcome: ReconcileOutcome, seconds: number): void {
    this.total.inc({ controller, result: outcome });
    this.duration.observe({ controller }, seconds);
    if (outcome === 'error' || outcome === 'terminal' || outcome === 'panic') this.errors.inc({ controller });
    if (outcome === 'panic') this.panics.inc({ controller });
  }

  purged(seconds: number, complete: boolean): void {
    this.purge.observe({ complete: String(complete) }, seconds);
  }
}
