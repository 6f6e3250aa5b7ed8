/**
 * Asks for an app's fields on a terminal (`core startapp <name>` without --template). The primary key
 * `id` (uuid) is always there; each answer adds one field; an empty name finishes. Ctrl+C cancels and
 * nothing is written.
 */
import prompts, { type PromptObject } from 'prompts';
import { FIELD_TYPES, type FieldSpec, type FieldType } from '../manifest/schema.js';

const NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

export class PromptCancelled extends Error {
  constructor() {
    super('cancelled: nothing was written');
    this.name = 'PromptCancelled';
  }
}

async function ask<T>(question: PromptObject): Promise<T> {
  const answers = await prompts(question, {
    onCancel: () => {
      throw new PromptCancelled();
    },
  });
  return answers[question.name as string] as T;
}

export async function promptFields(module: string): Promise<Record<string, FieldSpec>> {
  process.stderr.write(`Fields of ${module} (besides the uuid primary key "id"); leave the name empty to finish.\n`);
  const fields: Record<string, FieldSpec> = {};
  for (;;) {
    const name = (
      await ask<string>({
        type: 'text',
        name: 'name',
        message: 'Field name',
        validate: (value: string) =>
          value === '' || (NAME.test(value) && value !== 'id' && !(value in fields))
            ? true
            : 'lower snake_case, not "id" and not used yet',
      })
    ).trim();
    if (name === '') return fields;
    const type = await ask<FieldType>({
      type: 'select',
      name: 'type',
      message: `Type of ${name}`,
      choices: FIELD_TYPES.map((t) => ({ title: t, value: t })),
      initial: FIELD_TYPES.indexOf('string'),
    });
    const field: FieldSpec = { type };
    if (type === 'string') {
      field.max_length = await ask<number>({
        type: 'number',
        name: 'max',
        message: 'Maximum length',
        initial: 255,
        min: 1,
        max: 65535,
      });
    }
    if (type === 'enum') {
      // The `list` prompt answers with the parts already split at the separator.
      const values = await ask<string[]>({
        type: 'list',
        name: 'values',
        message: 'Allowed values (comma separated)',
        separator: ',',
        validate: (value: string) => (value.split(',').some((v) => v.trim() !== '') ? true : 'at least one value'),
      });
      field.values = [...new Set(values.map((v) => v.trim()).filter(Boolean))];
    }
    if (await ask<boolean>({ type: 'confirm', name: 'nullable', message: 'May it be empty (null)?', initial: false })) {
      field.nullable = true;
      field.default = null;
    }
    if (await ask<boolean>({ type: 'confirm', name: 'unique', message: 'Unique?', initial: false }))
      field.unique = true;
    fields[name] = field;
  }
}
