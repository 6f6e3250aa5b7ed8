/**
 * The broker's names for one project. `<project>` is `PROJECT_NAME` lower-cased with every character
 * outside `[a-z0-9_-]` replaced by `_`, `<PROJECT>` the same upper-cased:
 *
 * - stream `<PROJECT>_EVENTS`, subjects `<project>.events.<event name>` (`demo.events.tasks.created`);
 * - stream `<PROJECT>_DLQ`, subjects `<project>.dlq.<handler name>`.
 */
export interface BrokerNames {
  readonly project: string;
  readonly eventsStream: string;
  readonly dlqStream: string;
  /** `<project>.events.>`: every event of the project, the events stream's subjects. */
  readonly allEvents: string;
  /** `<project>.dlq.>`. */
  readonly allDeadLetters: string;
  /** The subject of one event name, or of every event for `*`. */
  subject(eventName: string): string;
  deadLetterSubject(handlerName: string): string;
}

export function brokerNames(projectName: string): BrokerNames {
  const project = projectName.toLowerCase().replace(/[^a-z0-9_-]/g, '_') || '_';
  const upper = project.toUpperCase();
  return Object.freeze({
    project,
    eventsStream: `${upper}_EVENTS`,
    dlqStream: `${upper}_DLQ`,
    allEvents: `${project}.events.>`,
    allDeadLetters: `${project}.dlq.>`,
    subject: (eventName: string) => (eventName === '*' ? `${project}.events.>` : `${project}.events.${eventName}`),
    deadLetterSubject: (handlerName: string) => `${project}.dlq.${handlerName}`,
  });
}

/**
 * Dotted tokens of letters, digits, `_` and `-`: each becomes a token of a subject, so wildcards
 * (`*`, `>`), spaces and empty tokens are refused (the broker would store such a subject, but no
 * consumer filter could name it exactly).
 */
const EVENT_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export function isBrokerEventName(name: string): boolean {
  return name.length <= 200 && EVENT_NAME.test(name);
}
