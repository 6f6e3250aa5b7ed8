/**
 * The response envelope, as schemas every answer of a Core route must validate against, whatever
 * the request was: `{ success: true, message, data, meta }`, or
 * `{ success: false, message, data: null, error: { code, details } }` where `code` is the one the
 * error table gives the status and each of the (at least one) details names a `path`.
 */
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { ERROR_CODES, type ErrorCode } from '@core/runtime';

const Detail = Type.Object({
  path: Type.String(),
  message: Type.String({ minLength: 1 }),
  reason: Type.Optional(Type.String({ minLength: 1 })),
});

const ErrorEnvelope = Compile(
  Type.Object(
    {
      success: Type.Literal(false),
      message: Type.String({ minLength: 1 }),
      data: Type.Null(),
      error: Type.Object(
        { code: Type.Enum(Object.keys(ERROR_CODES) as ErrorCode[]), details: Type.Array(Detail, { minItems: 1 }) },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
);

const SuccessEnvelope = Compile(
  Type.Object(
    { success: Type.Literal(true), message: Type.String({ minLength: 1 }), data: Type.Unknown(), meta: Type.Unknown() },
    { additionalProperties: false },
  ),
);

export interface ErrorBody {
  success: false;
  message: string;
  data: null;
  error: { code: ErrorCode; details: { path: string; message: string; reason?: string }[] };
  meta?: never;
}

export interface SuccessBody {
  success: true;
  message: string;
  data: unknown;
  meta: unknown;
}

export type Envelope = ErrorBody | SuccessBody;

/** The parsed envelope, or what is wrong with the response as an envelope. */
export function readEnvelope(
  status: number,
  contentType: string | undefined,
  text: string,
): { body: Envelope } | { problem: string } {
  if (!/^application\/json\b/i.test(contentType ?? ''))
    return { problem: `content-type ${JSON.stringify(contentType)} is not application/json` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: 'the body is not JSON' };
  }
  if (status >= 400) {
    if (!ErrorEnvelope.Check(json)) {
      const first = [...ErrorEnvelope.Errors(json)][0];
      return {
        problem: `not the error envelope (${first ? `${first.instancePath || '/'} ${first.message}` : 'shape'})`,
      };
    }
    const { code } = (json as ErrorBody).error;
    if (ERROR_CODES[code].status !== status)
      return { problem: `error.code ${code} belongs to ${ERROR_CODES[code].status}, not ${status}` };
    return { body: json as ErrorBody };
  }
  if (!SuccessEnvelope.Check(json)) {
    const first = [...SuccessEnvelope.Errors(json)][0];
    return {
      problem: `not the success envelope (${first ? `${first.instancePath || '/'} ${first.message}` : 'shape'})`,
    };
  }
  return { body: json as SuccessBody };
}
