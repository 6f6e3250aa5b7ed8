/**
 * The field questions of `core startapp <name>` on a terminal, answered through prompts' injection
 * (the order of answers is the order of questions).
 */
import prompts from 'prompts';
import { describe, expect, it, vi } from 'vitest';
import { promptFields } from '../../generator/project/prompt-fields.js';
import { manifestWithFields } from '../../generator/project/starter-manifest.js';
import { validateManifest } from '../../generator/manifest/validate.js';

describe('promptFields', () => {
  it('asks field by field until the name is empty, and the result is a valid manifest', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    prompts.inject([
      'title',
      'string',
      120,
      false,
      true, // name, type, max length, nullable?, unique?
      'status',
      'enum',
      ['todo', ' done', 'todo', ''],
      false,
      false, // values trimmed, deduplicated, blanks dropped
      'due_on',
      'date',
      true,
      false,
      '',
    ]);
    const fields = await promptFields('tasks');
    expect(fields).toEqual({
      title: { type: 'string', max_length: 120, unique: true },
      status: { type: 'enum', values: ['todo', 'done'] },
      due_on: { type: 'date', nullable: true, default: null },
    });
    const manifest = validateManifest(manifestWithFields('tasks', fields), 'tasks.resource.json');
    expect(Object.keys(manifest.fields)).toEqual(['id', 'title', 'status', 'due_on']);
  });
});
