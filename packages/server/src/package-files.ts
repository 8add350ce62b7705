/**
 * Where the server finds the files it ships beside its code: worker scripts, the word tables,
 * the SQL migrations, package.json and the dashboard's build.
 *
 * This module sits at the top of src/, and the build's modules all sit at the top of dist/
 * (scripts/build-server.ts bundles them there, with the assets copied to the same paths under
 * dist/ as under src/). So this module's own directory is the code's root in both layouts, and
 * a file is named by its path under src/: `embed/data/glove-100d.bin`. A module deeper in src/
 * must not resolve such paths from its own URL: in the build it is part of a bundle one level
 * down, at the top of dist/.
 */

/** src/ when the sources run (tests, `npm start`), dist/ in the package. */
const CODE_ROOT = new URL('./', import.meta.url);

/** The server package's directory (package.json, dashboard/dist/). */
export const PACKAGE_ROOT = new URL('../', import.meta.url);

/** A file shipped with the code, by its path under src/ (or dist/). */
export const codeFile = (path: string): URL => new URL(path, CODE_ROOT);

/**
 * A worker thread's script, by its path under src/ without the extension: the .ts source
 * when the sources run, the bundle's entry (.js) in the package.
 */
export const workerScript = (path: string): URL => codeFile(`${path}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`);
