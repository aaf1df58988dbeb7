// Scale-out (BROKER_URL): the services that are shared through the broker
// instead of kept in this process. Without a broker none of this runs.

import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { LocalEventBus } from '../events/bus.ts';
import type { QueueRegistry } from '../events/queues.ts';
import type { EventQueue } from '../events/queue.ts';
import { Broker } from './broker.ts';
import { BrokerEventBus } from './bus.ts';
import { ClusterQueues } from './queues.ts';
import { brokerRateLimiter } from './rate-limit.ts';

export { Broker };

export interface Cluster {
  broker: Broker;
  bus: BrokerEventBus;
  queues: ClusterQueues;
  rateLimiter: ReturnType<typeof brokerRateLimiter>;
  /** Subscribes, and adopts queues left in the broker; `adopted` hears of every queue that moves here. */
  start(adopted: (queues: EventQueue[]) => void): Promise<void>;
  /** At a graceful stop, after the HTTP server closed: queues go to another process. */
  stop(): Promise<void>;
}

export function connectBroker(config: Config, log: Logger): Promise<Broker> {
  return Broker.connect(config.brokerUrl!, config.brokerPrefix, log);
}

export function queueIdPrefix(broker: Broker | undefined): string {
  return broker ? ClusterQueues.idPrefix(broker) : '';
}

export function clusterServices(broker: Broker, local: LocalEventBus, queues: QueueRegistry, config: Config, log: Logger): Cluster {
  const bus = new BrokerEventBus(broker, local, queues, log);
  const remote = new ClusterQueues(broker, bus, queues, config, log);
  return {
    broker,
    bus,
    queues: remote,
    rateLimiter: brokerRateLimiter(broker, log),
    async start(adopted) {
      await bus.start();
      await remote.start(adopted);
    },
    async stop() {
      try {
        await remote.handOver();
      } catch (err) {
        log.error({ err }, 'event queues could not be handed over');
      }
      await broker.close();
    },
  };
}
