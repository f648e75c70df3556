# What a sync copies again of what a failed sync left dirty (mirror_sync_one). Files: the dirty paths (path records),
# then this sync's walk; -v gone=FILE. Prints the walk's record of each dirty path, and of each entry under a dirty
# path that was not a directory (rsync --force replaced a directory there); appends to FILE the dirty paths the walk
# no longer lists, for removal. Needs records.awk.
BEGIN { RS = "\0"; ORS = "\0" }
# The dirty paths (dirty), those that were not directories (notdir) and how many of them (nn).
FILENAME == ARGV[1] {
  p = record_path($0); dirty[p] = 1
  if (record_type($0) != "d") { notdir[p] = 1; nn++ }
  next
}
{
  p = record_path($0)
  if (p in dirty) { print; seen[p] = 1; next }
  if (nn && under(p, notdir)) print
}
END { for (p in dirty) if (!(p in seen)) print p >> gone }
