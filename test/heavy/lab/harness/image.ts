import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** The guest image built by test/heavy/lab/image/build.sh. */
export interface LabImage {
  readonly dir: string;
  readonly rootImage: string;
  readonly kernel: string;
  readonly initrd: string;
  /** The kernel matrix (test/heavy/lab/image/kernels): per tag ('6.12', '7'), its kernel, initrd and version. */
  readonly kernels: Readonly<Record<string, { readonly kernel: string; readonly initrd: string; readonly version: string }>>;
}

export const LAB_DIR = path.resolve(__dirname, '..');
export const REPO_DIR = path.resolve(LAB_DIR, '..', '..', '..');
export const CACHE_DIR = process.env.LAB_CACHE_DIR ?? path.join(REPO_DIR, '.lab-cache');

/**
 * Finds the built image: LAB_IMAGE_DIR if set, else the directory build.sh would produce for the current recipe.
 * Throws with the command to run when the image is not built.
 */
export function findImage(): LabImage {
  let dir = process.env.LAB_IMAGE_DIR;
  if (!dir) {
    try {
      dir = execFileSync('bash', [path.join(LAB_DIR, 'image', 'build.sh'), '--path'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }).trim();
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr ?? '';
      throw new Error(`lab image not built: ${stderr.trim() || (e as Error).message} (run test/heavy/lab/image/build.sh as root)`);
    }
  }
  const kernels: Record<string, { kernel: string; initrd: string; version: string }> = {};
  const info = fs.existsSync(path.join(dir, 'build-info.txt')) ? fs.readFileSync(path.join(dir, 'build-info.txt'), 'utf8') : '';
  for (const m of info.matchAll(/^kernel-([^=]+)=(.+)$/gm)) {
    kernels[m[1]] = { kernel: path.join(dir, `vmlinuz-${m[1]}`), initrd: path.join(dir, `initrd-${m[1]}.img`), version: m[2] };
  }
  const image = {
    dir,
    rootImage: path.join(dir, 'root.img'),
    kernel: path.join(dir, 'vmlinuz'),
    initrd: path.join(dir, 'initrd.img'),
    kernels,
  };
  for (const f of [image.rootImage, image.kernel, image.initrd, ...Object.values(kernels).flatMap((k) => [k.kernel, k.initrd])]) {
    if (!fs.existsSync(f)) throw new Error(`lab image incomplete: ${f} is missing`);
  }
  return image;
}
