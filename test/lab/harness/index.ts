export { Lab } from './lab';
export type { LabOptions, LinkOptions, ImdsRequest } from './lab';
export { Vm } from './vm';
export type { VmOptions, InstanceMetadata, NvmeDisk, ExtraDisk, ExecOptions, ExecResult, CloudInitResult, StartOptions } from './vm';
export { findImage } from './image';
export type { LabImage } from './image';
export { progress } from './log';
export { keptCode, keptCodeVendorData, PSEUDO_VALUES, resolveUserData, resolveIntrinsics, userDataResources, UnresolvedIntrinsicError } from './user-data';
export type { CfnTemplate, IntrinsicValue, IntrinsicValues } from './user-data';
