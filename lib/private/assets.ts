import * as fs from 'fs';
import * as path from 'path';

let cachedRoot: string | undefined;

/**
 * The package root: the nearest folder above this file holding both package.json and assets/. Works from the
 * TypeScript sources (ts-jest, ts-node) and from compiled JS in dist/ inside another app's node_modules.
 */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'assets'))) {
      cachedRoot = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cdk-efs-cache: cannot find the package's assets/ folder above ${__dirname}`);
    dir = parent;
  }
}

/** Absolute path of a file under assets/. */
export function assetPath(...parts: string[]): string {
  return path.join(packageRoot(), 'assets', ...parts);
}

/** Text of a file under assets/. */
export function readAsset(...parts: string[]): string {
  return fs.readFileSync(assetPath(...parts), 'utf8');
}
