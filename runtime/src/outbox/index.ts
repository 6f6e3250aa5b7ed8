export { EventBroker, attachEventBroker, detachEventBroker, eventBrokerOf } from './event-broker.js';
export type { EventBrokerOptions, EventBrokerStats } from './event-broker.js';
export type { HandlerStats } from './handler-consumer.js';
export { EventRefusedError, MAX_EVENT_BYTES } from './message.js';
export { brokerNames } from './names.js';
export type { BrokerNames } from './names.js';
export type { RelayStats } from './relay.js';
export { registerDbEventDispatcher, type RegisterDbEventDispatcherOptions } from './register.js';
