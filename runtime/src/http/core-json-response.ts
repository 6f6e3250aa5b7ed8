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
    return `{"success":true,"message":${JSON.stringify(message)},"data":${data},"meta":${CoreJSONResponse.encode(meta)}}`;
  }

  /**
   * The unified JSON encoder: `JSON.stringify` plus what it cannot do by itself — bigint as a decimal
   * string (JSON numbers lose precision past 2^53), and a `Set` as an array.
   */
  static encode(value: unknown): string {
    return JSON.stringify(value, encodeValue) ?? 'null';
  }
}

function encodeValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Set) return [...value];
  return value;
}
