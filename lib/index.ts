export * from './origin/origin-file-system';
export * from './cached-file-system';
