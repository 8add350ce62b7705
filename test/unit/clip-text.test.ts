import { describe, expect, it } from 'vitest';
import { clipText, clipWithEllipsis } from '../../packages/server/src/domain/clip-text.ts';

describe('clipText', () => {
  it('cuts to the length asked for, never inside a surrogate pair', () => {
    expect(clipText('abcdef', 4)).toBe('abcd');
    expect(clipText('abc', 4)).toBe('abc');
    // 😀 is two code units: a cut after its first leaves it out whole.
    expect(clipText('ab😀cd', 3)).toBe('ab');
    expect(clipText('ab😀cd', 4)).toBe('ab😀');
    expect(clipText('😀', 1)).toBe('');
    for (let max = 0; max < 12; max++) expect(clipText('😀a😀b😀c', max).isWellFormed(), String(max)).toBe(true);
  });

  it('marks a cut with an ellipsis counted in the length', () => {
    expect(clipWithEllipsis('abcdef', 4)).toBe('abc…');
    expect(clipWithEllipsis('abcd', 4)).toBe('abcd');
    expect(clipWithEllipsis('ab😀cd', 4)).toBe('ab…');
    expect(clipWithEllipsis('ab😀cd', 5)).toBe('ab😀…');
  });
});
