/** What the lab files read from their guests, shared by scenarios.lab.ts and aws.lab.ts. */
import { Vm } from '../harness';

/** Bytes an nfsd has read for its clients (first field of the `io` line of /proc/net/rpc/nfsd). */
export async function nfsdReadBytes(vm: Vm): Promise<number> {
  return Number((await vm.execOk("awk '$1 == \"io\" { print $2 }' /proc/net/rpc/nfsd")).trim());
}

/** The sha256 of a file in the guest (ten minutes at most: a large file through a slow mount). */
export async function sha256(vm: Vm, file: string): Promise<string> {
  return (await vm.execOk(`sha256sum ${file} | cut -d' ' -f1`, { timeoutMs: 10 * 60_000 })).trim();
}
