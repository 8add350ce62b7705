import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BACKENDS } from '../../packages/server/src/store/backends.ts';

// One place knows the backend: outside the backends' own folders (store/<name>/) and their
// list (store/backends.ts), no code names one — it asks the backend's capabilities instead.
// Comments may name them; strings and identifiers the code acts on may not.

const src = join(import.meta.dirname, '../../packages/server/src');
const names = BACKENDS.map((b) => b.name);
const naming = new RegExp(`\\b(${names.join('|')})\\b`, 'i');

/** The string literals and template texts of a file, with their line numbers. */
const stringsOf = (file: string, text: string): Array<{ line: number; text: string }> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Array<{ line: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      // Import specifiers name files, not backends.
      if (!ts.isImportDeclaration(node.parent) && !ts.isExportDeclaration(node.parent) && !(ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword)) {
        found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
};

describe('the backend is known in one place', () => {
  it('every backend is a folder under store/ with its backend.ts, listed once', async () => {
    const folders = (await readdir(join(src, 'store'), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
    for (const folder of folders) expect((await readdir(join(src, 'store', folder))).includes('backend.ts'), `store/${folder}/backend.ts`).toBe(true);
    expect(folders).toHaveLength(BACKENDS.length);
    expect(new Set(names).size).toBe(names.length);
    expect(BACKENDS.filter((b) => b.selectedBy === null)).toHaveLength(1);
  });

  it('no file outside the backends names one in its code', async () => {
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const outside = files.filter((f) => !/^store\/[^/]+\//.test(f) && f !== 'store/backends.ts');
    const offenders: string[] = [];
    for (const file of outside) {
      for (const { line, text } of stringsOf(file, await readFile(join(src, file), 'utf8'))) {
        if (naming.test(text)) offenders.push(`${file}:${line}: ${JSON.stringify(text)}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the check sees a backend named in a string, and not in a comment or an import', () => {
    const planted = "// postgres is fine here\nimport { x } from './postgres/y.ts';\nif (store.backend === 'postgres') run(`on ${'s3'}`);";
    const hits = stringsOf('planted.ts', planted).filter((s) => naming.test(s.text)).map((s) => s.text);
    expect(hits).toEqual(['postgres', 's3']);
  });
});
