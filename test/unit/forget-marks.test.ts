import { describe, expect, it } from 'vitest';
import { ForgetMarks } from '../../packages/server/src/store/postgres/forget-marks.ts';

const at = (entity_path: string, key = 'k', namespace = 'default') => ({ namespace, entity_path, key });

describe('ForgetMarks: was a version read before a forget that names it?', () => {
  it('answers no when no forget came since the mark', () => {
    const marks = new ForgetMarks();
    marks.note({ namespace: 'default', prefix: 'people' });
    const mark = marks.mark();
    expect(marks.namesSince(mark, at('people/alice'))).toBe(false);
  });

  it('answers yes only for what a later forget names: its prefix segment-wise, its key, its namespace', () => {
    const marks = new ForgetMarks();
    const mark = marks.mark();
    marks.note({ namespace: 'default', prefix: 'people/alice' });
    marks.note({ namespace: 'default', prefix: 'repos/api', key: 'pr-1' });
    expect(marks.namesSince(mark, at('people/alice'))).toBe(true);
    expect(marks.namesSince(mark, at('people/alice/notes'))).toBe(true);
    expect(marks.namesSince(mark, at('people/alice-b'))).toBe(false);
    expect(marks.namesSince(mark, at('people/alice', 'k', 'other'))).toBe(false);
    expect(marks.namesSince(mark, at('repos/api', 'pr-1'))).toBe(true);
    expect(marks.namesSince(mark, at('repos/api', 'pr-2'))).toBe(false);
    // A mark taken between the two sees the second only.
    const fresh = new ForgetMarks();
    fresh.note({ namespace: 'default', prefix: 'people/alice' });
    const between = fresh.mark();
    fresh.note({ namespace: 'default', prefix: 'repos/api', key: 'pr-1' });
    expect(fresh.namesSince(between, at('people/alice'))).toBe(false);
    expect(fresh.namesSince(between, at('repos/api', 'pr-1'))).toBe(true);
  });

  it('answers yes when more forgets came since the mark than it remembers', () => {
    const marks = new ForgetMarks();
    const mark = marks.mark();
    for (let i = 0; i < 1025; i++) marks.note({ namespace: 'default', prefix: `gone/${i}` });
    expect(marks.namesSince(mark, at('unrelated/path'))).toBe(true);
    // A mark within what it remembers is still answered exactly.
    const recent = marks.mark();
    marks.note({ namespace: 'default', prefix: 'gone/again' });
    expect(marks.namesSince(recent, at('unrelated/path'))).toBe(false);
  });
});
