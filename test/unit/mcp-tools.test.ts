import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../../packages/server/src/mcp/tools.ts';
import { BriefingInput } from '../../packages/server/src/services/briefing.ts';
import { DeleteEntryInput } from '../../packages/server/src/services/delete-entry.ts';
import { EntryHistoryInput } from '../../packages/server/src/services/entry-history.ts';
import { NeighboursInput } from '../../packages/server/src/services/entry-neighbours.ts';
import { ListDigestsInput } from '../../packages/server/src/services/list-digests.ts';
import { ListEntriesInput } from '../../packages/server/src/services/list-entries.ts';
import { ReadEntryInput } from '../../packages/server/src/services/read-entry.ts';
import { RecordOutcomeInput } from '../../packages/server/src/services/record-outcome.ts';
import { SearchInput } from '../../packages/server/src/services/search-entries.ts';
import { WriteBatchInput } from '../../packages/server/src/services/write-batch.ts';
import { WriteEntryInput } from '../../packages/server/src/services/write-entry.ts';

const keys = (schema: z.ZodObject) => Object.keys(schema.shape).sort();
const tool = (name: string) => TOOLS.find((t) => t.name === name)!;

// A tool's schema only documents; the service validates. They must name the same fields, or
// a model would be shown arguments the service refuses, or miss ones it takes.
const SERVICE_INPUTS: Record<string, z.ZodObject> = {
  memory_write: WriteEntryInput,
  memory_write_batch: WriteBatchInput,
  memory_neighbours: NeighboursInput,
  memory_read: ReadEntryInput,
  memory_list: ListEntriesInput,
  memory_history: EntryHistoryInput,
  memory_delete: DeleteEntryInput,
  memory_record_outcome: RecordOutcomeInput,
  memory_search: SearchInput,
  memory_briefing: BriefingInput,
  cortex_digests: ListDigestsInput,
};

describe('MCP tool definitions', () => {
  it('are the nine tools of SPEC §9, the batch write and the neighbours walk, each with a distinct name and operation', () => {
    expect(TOOLS.map((t) => t.name).sort()).toEqual([
      'cortex_digests', 'memory_briefing', 'memory_delete', 'memory_history', 'memory_list', 'memory_neighbours', 'memory_read', 'memory_record_outcome', 'memory_search', 'memory_write', 'memory_write_batch',
    ]);
    expect(new Set(TOOLS.map((t) => t.operation)).size).toBe(TOOLS.length);
  });

  it.each(Object.entries(SERVICE_INPUTS))('%s documents exactly the fields its service takes', (name, input) => {
    expect(keys(tool(name).input)).toEqual(keys(input));
  });

  it.each(Object.entries(SERVICE_INPUTS))('%s: the tool and its service refuse a field they do not name', (name, input) => {
    expect(tool(name).input._zod.def.catchall?._zod.def.type, name).toBe('never');
    expect(input._zod.def.catchall?._zod.def.type, name).toBe('never');
  });

  it('memory_write_batch documents the fields a batch item takes: no `similar`, which the service refuses', () => {
    const items = (schema: z.ZodObject) => (schema.shape.entries as z.ZodArray<z.ZodObject>).element;
    expect(keys(items(tool('memory_write_batch').input))).toEqual(keys(items(WriteBatchInput)));
    const listed = z.toJSONSchema(tool('memory_write_batch').input, { io: 'input', unrepresentable: 'any' }) as unknown as { properties: { entries: { items: { properties: object; additionalProperties: unknown } } } };
    expect(listed.properties.entries.items.properties).not.toHaveProperty('similar');
    expect(listed.properties.entries.items.additionalProperties).toBe(false);
  });

  it('mark what only reads as read-only and what deletes as destructive', () => {
    for (const t of TOOLS) {
      const writes = ['write', 'writeBatch', 'delete', 'recordOutcome'].includes(t.operation);
      expect(t.annotations.readOnlyHint, t.name).toBe(!writes);
    }
    expect(tool('memory_delete').annotations.destructiveHint).toBe(true);
  });
});
