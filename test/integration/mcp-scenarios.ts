import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect, it } from 'vitest';
import { callTool } from '../helpers/mcp.ts';

export const EXPECTED_TOOLS = [
  'memory_write', 'memory_write_batch', 'memory_read', 'memory_list', 'memory_history', 'memory_neighbours', 'memory_delete', 'memory_record_outcome',
  'memory_search', 'memory_briefing', 'cortex_digests',
];

let unique = 0;
const freshPath = () => `repos/acme/mcp-${++unique}-${Date.now()}`;

/**
 * The tool scenarios of the issue, run the same way against `/mcp` and `cairn mcp`: list
 * tools, write, read, list, history, delete, outcome, search, briefing, and the error paths a
 * model must be able to read and fix.
 */
export const mcpScenarios = (client: () => Client): void => {
  it('lists the tools with descriptions and input schemas written for a model', async () => {
    const { tools } = await client().listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...EXPECTED_TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(120);
      expect(tool.inputSchema.type).toBe('object');
    }
    const write = tools.find((t) => t.name === 'memory_write')!;
    expect(write.inputSchema.required).toEqual(expect.arrayContaining(['entity_path', 'key', 'value']));
    const props = write.inputSchema.properties as Record<string, { description?: string }>;
    expect(props.entity_path?.description).toContain('repos/acme/api');
    expect(props.confidence?.description).toMatch(/0–1/);
    expect(tools.find((t) => t.name === 'memory_read')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((t) => t.name === 'memory_delete')!.annotations).toMatchObject({ destructiveHint: true });
    // A batch item takes what memory_write takes but `similar`, which the batch refuses.
    const batchItem = (tools.find((t) => t.name === 'memory_write_batch')!.inputSchema.properties as { entries: { items: { properties: object } } }).entries.items;
    expect(batchItem.properties).toHaveProperty('if_version');
    expect(batchItem.properties).not.toHaveProperty('similar');
  });

  it('writes, re-writes unchanged, reads, lists and walks the history', async () => {
    const path = freshPath();
    const first = await callTool(client(), 'memory_write', { entity_path: path, key: 'pr-42', value: { title: 'Fix retry storm', state: 'open' }, confidence: 0.8, agent_id: 'review-bot' });
    expect(first.isError).toBe(false);
    expect(first.body).toMatchObject({ unchanged: false, entry: { entity_path: path, key: 'pr-42', version: 1, confidence: 0.8, agent_id: 'review-bot' } });
    const again = await callTool(client(), 'memory_write', { entity_path: path, key: 'pr-42', value: { state: 'open', title: 'Fix retry storm' }, confidence: 0.8, agent_id: 'review-bot' });
    expect(again.body).toMatchObject({ unchanged: true, entry: { version: 1 } });
    await callTool(client(), 'memory_write', { entity_path: path, key: 'pr-42', value: { title: 'Fix retry storm', state: 'merged' }, agent_id: 'review-bot' });

    const read = await callTool(client(), 'memory_read', { entity_path: path, key: 'pr-42' });
    expect(read.isError).toBe(false);
    expect(read.body).toMatchObject({ version: 2, value: { state: 'merged' }, confidence: 1 });
    expect(JSON.parse(read.text)).toEqual(read.body);
    const old = await callTool(client(), 'memory_read', { entity_path: path, key: 'pr-42', version: 1 });
    expect(old.body).toMatchObject({ version: 1, value: { state: 'open' } });

    await callTool(client(), 'memory_write', { entity_path: `${path}/sub`, key: 'note', value: 'a plain string' });
    const list = await callTool(client(), 'memory_list', { entity_path: path, limit: 10 });
    expect(list.body.entries.map((e: { key: string }) => e.key)).toEqual(['pr-42', 'note']);
    expect(list.body.next_cursor).toBeNull();

    const history = await callTool(client(), 'memory_history', { entity_path: path, key: 'pr-42' });
    expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(history.body.next_before).toBeNull();
  });

  it('deletes (history kept) and moves confidence with outcomes', async () => {
    const path = freshPath();
    await callTool(client(), 'memory_write', { entity_path: path, key: 'owner', value: 'team-a', confidence: 0.5 });
    const outcome = await callTool(client(), 'memory_record_outcome', { entries: [{ entity_path: path, key: 'owner', version: 1 }], outcome: 'success', weight: 0.5 });
    expect(outcome.body.results[0]).toMatchObject({ status: 'updated', previous_confidence: 0.5, confidence: 0.75, version: 2 });

    const deleted = await callTool(client(), 'memory_delete', { entity_path: path, key: 'owner' });
    expect(deleted).toMatchObject({ isError: false, body: { deleted: true, entity_path: path, key: 'owner' } });
    const gone = await callTool(client(), 'memory_read', { entity_path: path, key: 'owner' });
    expect(gone.isError).toBe(true);
    expect(gone.body.error.code).toBe('NOT_FOUND');
    const history = await callTool(client(), 'memory_history', { entity_path: path, key: 'owner' });
    expect(history.body.versions.map((v: { deleted: boolean }) => v.deleted)).toEqual([true, false, false]);
  });

  it('writes a batch whole, and refuses a conflicting one whole with a tool error naming the item', async () => {
    const path = freshPath();
    const written = await callTool(client(), 'memory_write_batch', {
      entries: [
        { entity_path: path, key: 'decision', value: 'use retries with jitter' },
        { entity_path: path, key: 'reason', value: { incident: 'INC-7' } },
      ],
    });
    expect(written.isError).toBe(false);
    expect(written.body.results.map((r: { entry: { key: string; version: number } }) => [r.entry.key, r.entry.version])).toEqual([['decision', 1], ['reason', 1]]);
    const refused = await callTool(client(), 'memory_write_batch', {
      entries: [
        { entity_path: path, key: 'fresh', value: 'x' },
        { entity_path: path, key: 'decision', value: 'other', if_version: 0 },
      ],
    });
    expect(refused.isError).toBe(true);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'entries.1.if_version' }] });
    expect((await callTool(client(), 'memory_read', { entity_path: path, key: 'fresh' })).body.error.code).toBe('NOT_FOUND');
  });

  it('follows links both ways with memory_neighbours', async () => {
    const path = freshPath();
    await callTool(client(), 'memory_write', { entity_path: path, key: 'deploy-3', value: 'deploy 3' });
    await callTool(client(), 'memory_write', { entity_path: path, key: 'incident', value: 'outage', links: [{ entity_path: path, key: 'deploy-3', relation: 'caused_by' }] });
    const walk = await callTool(client(), 'memory_neighbours', { entity_path: path, key: 'deploy-3' });
    expect(walk.isError).toBe(false);
    expect(walk.body.neighbours.map((n: { entry: { key: string }; depth: number }) => [n.entry.key, n.depth])).toEqual([['incident', 1]]);
    expect(walk.body.edges[0]).toMatchObject({ relation: 'caused_by', to: { key: 'deploy-3' } });
    const bad = await callTool(client(), 'memory_neighbours', { entity_path: path, key: 'deploy-3', depth: 7 });
    expect(bad.isError).toBe(true);
    expect(bad.body.error.details[0].field).toBe('depth');
  });

  it('answers a bad entity path with a tool error naming the field and the rule', async () => {
    const bad = await callTool(client(), 'memory_write', { entity_path: 'repos/../etc', key: 'k', value: 'v' });
    expect(bad.isError).toBe(true);
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'entity_path', message: expect.stringContaining('..') }], hint: expect.any(String) });
    expect(bad.text).toContain('entity_path');

    const slash = await callTool(client(), 'memory_read', { entity_path: '/repos/acme', key: 'k' });
    expect(slash.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'entity_path' }] });
    const missing = await callTool(client(), 'memory_read', { key: 'k' });
    expect(missing.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'entity_path' }] });
    const unknown = await callTool(client(), 'memory_write', { entity_path: 'repos/acme', key: 'k', value: 'v', colour: 'red' });
    expect(unknown.body.error.details).toEqual([{ field: 'colour', message: 'is not a known field' }]);
  });

  it('answers a missing entry and a stale if_version with errors a model can act on', async () => {
    const path = freshPath();
    const missing = await callTool(client(), 'memory_read', { entity_path: path, key: 'nope' });
    expect(missing.isError).toBe(true);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(path), hint: expect.stringContaining('memory_list') });
    const never = await callTool(client(), 'memory_history', { entity_path: path, key: 'nope' });
    expect(never.body.error.code).toBe('NOT_FOUND');

    await callTool(client(), 'memory_write', { entity_path: path, key: 'k', value: 'one' });
    const conflict = await callTool(client(), 'memory_write', { entity_path: path, key: 'k', value: 'two', if_version: 5 });
    expect(conflict.body.error).toMatchObject({ code: 'CONFLICT', hint: expect.stringContaining('if_version') });
  });

  it('refuses an argument a tool does not take, in every tool, with a tool error naming it, and changes nothing', async () => {
    const path = freshPath();
    await callTool(client(), 'memory_write', { entity_path: path, key: 'k', value: 'one' });
    await callTool(client(), 'memory_write', { entity_path: path, key: 'k', value: 'two' });
    // A misspelt if_version must not delete unconditionally.
    const typo = await callTool(client(), 'memory_delete', { entity_path: path, key: 'k', ifVersion: 1 });
    expect(typo.isError).toBe(true);
    expect(typo.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'ifVersion', message: 'is not a known field' }] });
    const valid: Record<string, Record<string, unknown>> = {
      memory_briefing: {},
      memory_search: { query: 'two' },
      memory_read: { entity_path: path, key: 'k' },
      memory_list: { entity_path: path },
      memory_history: { entity_path: path, key: 'k' },
      memory_neighbours: { entity_path: path, key: 'k' },
      memory_write: { entity_path: path, key: 'new', value: 'v' },
      memory_write_batch: { entries: [{ entity_path: path, key: 'batched', value: 'v' }] },
      memory_delete: { entity_path: path, key: 'k' },
      memory_record_outcome: { entries: [{ entity_path: path, key: 'k' }], outcome: 'failure' },
      cortex_digests: {},
    };
    const { tools } = await client().listTools();
    for (const tool of tools) {
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      const args = valid[tool.name];
      expect(args, `a call of ${tool.name} in this test`).toBeDefined();
      for (const wrong of ['as0f', 'entityPath']) {
        const answer = await callTool(client(), tool.name, { ...args, [wrong]: 'x' });
        expect(answer.isError, `${tool.name} with ${wrong}`).toBe(true);
        expect(answer.body.error, `${tool.name} with ${wrong}`).toMatchObject({ code: 'VALIDATION_FAILED', details: expect.arrayContaining([{ field: wrong, message: 'is not a known field' }]) });
      }
    }
    const read = await callTool(client(), 'memory_read', { entity_path: path, key: 'k' });
    expect(read.body).toMatchObject({ version: 2, value: 'two', confidence: 1 });
    const list = await callTool(client(), 'memory_list', { entity_path: path });
    expect(list.body.entries.map((e: { key: string }) => e.key)).toEqual(['k']);
  });

  it('refuses an unknown tool at the protocol level', async () => {
    await expect(client().callTool({ name: 'memory_teleport', arguments: {} })).rejects.toThrow(/unknown tool/);
  });

  it('searches by content', async () => {
    const path = freshPath();
    await callTool(client(), 'memory_write', { entity_path: path, key: 'incident', value: 'checkout latency spike after deploy' });
    const found = await callTool(client(), 'memory_search', { query: 'checkout latency', entity_path: path });
    expect(found.isError).toBe(false);
    expect(found.body.results[0]).toMatchObject({ entry: { entity_path: path, key: 'incident' }, highlights: expect.any(Array) });
    const bad = await callTool(client(), 'memory_search', { query: 'x', entity_path: 'a//b' });
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'entity_path' }] });
  });

  it('gives a briefing and the Cortex digests of an area once compiled', async () => {
    const service = `checkout-${++unique}-${Date.now()}`;
    const path = `incidents/pagerduty/${service}`;
    await callTool(client(), 'memory_write', {
      entity_path: path, key: 'incident-P1', agent_id: 'external/pagerduty', event_type: 'incident.triggered',
      value: { title: 'Checkout 500s', status: 'triggered', urgency: 'high', service, created_at: new Date().toISOString() },
    });
    let digests: Array<{ scope: string; headline: string }> = [];
    for (let i = 0; i < 100 && digests.length === 0; i++) {
      const answer = await callTool(client(), 'cortex_digests', { scope: path });
      expect(answer.isError).toBe(false);
      digests = answer.body.digests;
      if (digests.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(digests[0]).toMatchObject({ scope: `path:${path}`, headline: expect.any(String) });

    const briefing = await callTool(client(), 'memory_briefing', { entity_path: path, agent_id: 'someone-else' });
    expect(briefing.isError).toBe(false);
    expect(briefing.body).toMatchObject({ entity_path: path, cortex: { compiled: true }, digests: [expect.objectContaining({ scope: `path:${path}` })] });
    expect(briefing.body.recent_changes.map((c: { key: string }) => c.key)).toContain('incident-P1');
    expect(briefing.body.open_items.map((i: { key: string }) => i.key)).toContain('incident-P1');
    const bad = await callTool(client(), 'cortex_digests', { type: 'weather' });
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'type' }] });
  });
};
