import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of TypeScript sources, parsed with the compiler API (never with regexes:
 * comments, strings and multi-line imports would fool them). Module ids are paths relative
 * to the repository's packages/ folder (`server/src/ports/store.ts`, `client/src/index.ts`),
 * so a graph can be built from the files on disk or from a few strings in a test alike.
 * The rules over it are in import-rules.ts.
 */

export interface ImportEdge {
  from: string;
  /** The module id a relative specifier resolves to, or the bare specifier itself. */
  to: string;
  /** A package name or `node:` builtin rather than a file of the graph. */
  bare: boolean;
  /** `import type …`, `export type … from`, every named import marked `type`, or `import('…')` in a type. */
  typeOnly: boolean;
  kind: 'import' | 'export' | 'dynamic' | 'type-query';
}

export interface ModuleInfo {
  id: string;
  edges: ImportEdge[];
  /** Lines with a default export (`export default …`, `export { x as default }`). */
  defaultExports: number[];
  /** Declarations that carry code: classes, functions with bodies, functions in variable initialisers. */
  implementations: Array<{ name: string; line: number }>;
}

export interface ImportGraph {
  modules: Map<string, ModuleInfo>;
}

const SOURCE = /\.(ts|tsx|mts|cts)$/;

/** Every TypeScript file under `dirs` (relative to `packagesDir`), read and parsed. */
export function graphFromDisk(packagesDir: string, dirs: readonly string[]): ImportGraph {
  const files: Record<string, string> = {};
  for (const dir of dirs) {
    for (const file of walk(join(packagesDir, dir))) {
      files[relative(packagesDir, file).split(sep).join('/')] = readFileSync(file, 'utf8');
    }
  }
  return graphFromSources(files);
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return walk(path);
    return SOURCE.test(d.name) && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Builds the graph from `{ moduleId: sourceText }`; relative specifiers resolve among these ids. */
export function graphFromSources(files: Record<string, string>): ImportGraph {
  const ids = new Set(Object.keys(files));
  const modules = new Map<string, ModuleInfo>();
  for (const [id, text] of Object.entries(files)) modules.set(id, parseModule(id, text, ids));
  return { modules };
}

function parseModule(id: string, text: string, ids: ReadonlySet<string>): ModuleInfo {
  const source = ts.createSourceFile(id, text, ts.ScriptTarget.Latest, true, id.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const info: ModuleInfo = { id, edges: [], defaultExports: [], implementations: [] };
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const edge = (specifier: string, typeOnly: boolean, kind: ImportEdge['kind']) => {
    const bare = !specifier.startsWith('.') && !specifier.startsWith('/');
    info.edges.push({ from: id, to: bare ? specifier : resolve(id, specifier, ids), bare, typeOnly, kind });
  };

  const visit = (node: ts.Node, inCode: boolean): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      edge(node.moduleSpecifier.text, isTypeOnlyImport(node.importClause), 'import');
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      const typeOnly = node.isTypeOnly || (named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly));
      edge(node.moduleSpecifier.text, typeOnly, 'export');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) edge(arg.text, false, 'dynamic');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      edge(node.argument.literal.text, true, 'type-query');
    }

    const isDefault =
      (ts.isExportAssignment(node) && !node.isExportEquals) ||
      (ts.isExportSpecifier(node) && node.name.text === 'default') ||
      ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && hasDefaultModifier(node));
    if (isDefault) info.defaultExports.push(lineOf(node));

    // Only the outermost piece of code is listed (a class, not its methods too); a function
    // declaration without a body is an overload signature, which is only a type. The walk
    // still goes inside, for the imports a method may make.
    let code: string | undefined;
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) code = `class ${node.name?.text ?? '(anonymous)'}`;
    else if (ts.isFunctionDeclaration(node) && node.body) code = `function ${node.name?.text ?? '(anonymous)'}`;
    else if (ts.isVariableDeclaration(node) && node.initializer && containsFunction(node.initializer)) code = `function in ${node.name.getText(source)}`;
    if (code && !inCode) info.implementations.push({ name: code, line: lineOf(node) });
    ts.forEachChild(node, (child) => visit(child, inCode || code !== undefined));
  };
  visit(source, false);
  return info;
}

/**
 * `import type { A }` and `import { type A, type B }` are both type-only for layering: neither
 * lets the importer run the other module's code. (Under verbatimModuleSyntax the second form
 * still loads the module for its side effects; no module here relies on that.)
 */
function isTypeOnlyImport(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false; // `import './x.ts'` runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function hasDefaultModifier(node: ts.FunctionDeclaration | ts.ClassDeclaration): boolean {
  return ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword) ?? false;
}

function containsFunction(node: ts.Node): boolean {
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isClassExpression(node)) return true;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) return true;
  return ts.forEachChild(node, containsFunction) ?? false;
}

/** Resolves like Node's ESM loader on these sources: exact file, `.js` written for `.ts`, or a folder's index. */
function resolve(from: string, specifier: string, ids: ReadonlySet<string>): string {
  const target = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`];
  return candidates.find((c) => ids.has(c)) ?? target;
}
