/**
 * The library's public surface as jsii records it (.jsii, the assembly every language's package is generated from):
 * every construct's props and every static factory's parameters, walked down through the library's own structs to
 * the leaves a user can give as a deploy-time value (a string, a number, a list, a `Duration`, a `Size`).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');
const ASSEMBLY = path.join(ROOT, '.jsii');
const PREFIX = 'cdk-efs-cache.';

/** The kinds of value a deploy-time token can stand for. */
export type LeafKind = 'string' | 'number' | 'list' | 'duration' | 'size';

/** One place a user can give a deploy-time value. */
export interface Leaf {
  /**
   * The surface it belongs to: a construct (`CacheFleet`) or a static factory (`FanOut.route53`), as the assembly
   * names them.
   */
  readonly surface: string;
  /**
   * Its path from the surface's arguments: `props.tuning.nfsdThreads`, `options.zoneName`, `path` (a factory's own
   * parameter), `attrs.mirrorExports[0].exportPath` (a field of a list of structs, its first item).
   */
  readonly path: string;
  readonly kind: LeafKind;
}

/** What the assembly says of one type reference. */
interface TypeRef {
  readonly primitive?: string;
  readonly fqn?: string;
  readonly collection?: { readonly kind: string; readonly elementtype: TypeRef };
  readonly union?: unknown;
}
interface Parameter { readonly name: string; readonly type: TypeRef }
interface JsiiType {
  readonly kind: string;
  readonly datatype?: boolean;
  readonly interfaces?: string[];
  readonly properties?: { readonly name: string; readonly type: TypeRef }[];
  readonly initializer?: { readonly parameters?: Parameter[] };
  readonly methods?: { readonly name: string; readonly static?: boolean; readonly parameters?: Parameter[] }[];
}

/**
 * The assembly of lib/ as it stands: .jsii, built first (`npm run build`, about 20 s) when it is missing or older than
 * a file of lib/, so the sweep never reads an assembly of other code.
 */
export function loadAssembly(): Record<string, JsiiType> {
  const newest = Math.max(...listFiles(path.join(ROOT, 'lib')).map((f) => fs.statSync(f).mtimeMs));
  if (!fs.existsSync(ASSEMBLY) || fs.statSync(ASSEMBLY).mtimeMs < newest) {
    const r = spawnSync('npx', ['jsii', '--silence-warnings=metadata/missing-dev-dependency'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the jsii build failed:\n${r.stdout}\n${r.stderr}`);
  }
  return JSON.parse(fs.readFileSync(ASSEMBLY, 'utf8')).types;
}

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => e.isDirectory() ? listFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
}

/** What a leaf of this type is, or undefined for a type that holds no deploy-time value itself (a construct, an enum). */
function leafKind(t: TypeRef): LeafKind | undefined {
  if (t.primitive === 'string') return 'string';
  if (t.primitive === 'number') return 'number';
  if (t.fqn === 'aws-cdk-lib.Duration') return 'duration';
  if (t.fqn === 'aws-cdk-lib.Size') return 'size';
  if (t.collection?.kind === 'array' && t.collection.elementtype.primitive === 'string') return 'list';
  return undefined;
}

/**
 * Every leaf of the library's surface: for each class, its initializer's props (a construct: `(scope, id, props)`)
 * and each static method's parameters, walked through the library's structs (their parents included) and lists of
 * them. Parameters of other types (constructs, interfaces, enums, the library's union classes, whose factories are
 * surfaces of their own) hold no leaf. A type the walk does not know how to give a token (a union, a map, a list of
 * numbers) is returned in `unknown`, so the sweep fails on it rather than pass it over.
 */
export function surfaceLeaves(types: Record<string, JsiiType>): { leaves: Leaf[]; surfaces: string[]; unknown: string[] } {
  const leaves: Leaf[] = [];
  const unknown: string[] = [];
  const surfaces: string[] = [];
  const structProps = (fqn: string): { name: string; type: TypeRef }[] => {
    const t = types[fqn];
    return [...(t.properties ?? []), ...(t.interfaces ?? []).filter((i) => i.startsWith(PREFIX)).flatMap(structProps)];
  };
  const walk = (surface: string, at: string, t: TypeRef) => {
    const kind = leafKind(t);
    if (kind) {
      leaves.push({ surface, path: at, kind });
    } else if (t.fqn?.startsWith(PREFIX) && types[t.fqn].kind === 'interface' && types[t.fqn].datatype) {
      for (const p of structProps(t.fqn)) walk(surface, `${at}.${p.name}`, p.type);
    } else if (t.collection?.kind === 'array' && t.collection.elementtype.fqn?.startsWith(PREFIX) && types[t.collection.elementtype.fqn].datatype) {
      walk(surface, `${at}[0]`, t.collection.elementtype);
    } else if (t.union || (t.collection && (t.collection.kind !== 'array' || t.collection.elementtype.primitive || t.collection.elementtype.collection))) {
      unknown.push(`${surface} ${at}: ${JSON.stringify(t)}`);
    }
  };
  for (const [fqn, t] of Object.entries(types)) {
    if (t.kind !== 'class') continue;
    const name = fqn.slice(PREFIX.length);
    const init = t.initializer?.parameters ?? [];
    if (init.length === 3 && init[0].type.fqn === 'constructs.Construct') {
      surfaces.push(name);
      walk(name, init[2].name, init[2].type);
    }
    for (const m of (t.methods ?? []).filter((x) => x.static)) {
      const surface = `${name}.${m.name}`;
      surfaces.push(surface);
      for (const p of m.parameters ?? []) {
        if (p.type.fqn === 'constructs.Construct' || (p.name === 'id' && p.type.primitive === 'string')) continue;
        walk(surface, p.name, p.type);
      }
    }
  }
  return { leaves, surfaces, unknown };
}
