import type { Serializer } from '../schema/types.js';

export interface CoreJSONResponseOptions {
  /** HTTP status; 200 by default. */
  status?: number;
  /** `meta` of the envelope; null by default. */
  meta?: unknown;
  /** `message` of the envelope; `Success` by default. */
  message?: string;
  /** Extra response headers, e.g. `Location`. */
  headers?: Record<string, string>;
  /**
   * A compiled serializer for `data` (an output schema's `serializer(ctx)`): masks what the caller may
   * not see and is much faster than `JSON.stringify`. Without one, `data` goes through the unified encoder.
   */
  serializeData?: Serializer;
}

/**
 * A successful Core response: the envelope `{ success, message, data, meta }` rendered with Core's
 * JSON encoding. Route handlers of `CoreAPIRoute`s return one; the route sends it.
 */
export class CoreJSONResponse<T = unknown> {
  constructor(
    readonly data: T,
    readonly options: CoreJSONResponseOptions = {},
  ) {}

  get status(): number {
    return this.options.status ?? 200;
  }

  /** The envelope as JSON text: `data` through its compiled serializer, the rest through `encode`. */
  render(): string {
    const { meta = null, message = 'Success', serializeData } = this.options;
    const data =
      this.data === null || this.data === undefined
        ? 'null'
        : serializeData
          ? serializeData(this.data)
          : CoreJSONResponse.encode(this.data);
    const text = message === 'Success' ? '"Success"' : JSON.stringify(message);
    return `{"success":true,"message":${text},"data":${data},"meta":${CoreJSONResponse.encode(meta)}}`;
  }

  /**
   * The unified JSON encoder: `JSON.stringify` plus what it cannot do by itself — bigint as a decimal
   * string (JSON numbers lose precision past 2^53), and a `Set` as an array.
   */
  static encode(value: unknown): string {
    if (value === null || value === undefined) return 'null';
    // A replacer takes JSON.stringify off its fast path: a flat plain object (a page's `meta`) has no
    // bigint or Set for it to handle.
    return (isFlatPlainObject(value) ? JSON.stringify(value) : JSON.stringify(value, encodeValue)) ?? 'null';
  }
}

/** A plain object whose values are strings, finite-or-not numbers, booleans or null: JSON as it is. */
function isFlatPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    const type = typeof v;
    if (v !== null && type !== 'string' && type !== 'number' && type !== 'boolean' && type !== 'undefined')
      return false;
  }
  return true;
}

function encodeValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Set) return [...value];
  return value;
}
