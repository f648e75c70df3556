# What a failed sync keeps for the next one to continue from (mirror_keep). Files: the last good record (walk
# records, or /dev/null), the copy's own walk (`CTIME ` and a copy's record: its ctime in the copy first), this
# sync's walk; -v start=EPOCH -v dirty=FILE. Prints the walk's records of what the copy holds as the walk saw it:
# unchanged since the last good record, or written by this sync (its ctime in the copy at start or later) with the
# same attributes (record_key). Every other entry of the copy is appended to FILE. Needs records.awk.
BEGIN { RS = "\0"; ORS = "\0" }
FILENAME == ARGV[1] { unchanged[$0] = 1; next }
# The copy's entries (have, by path) and the keys of those this sync wrote (wrote).
FILENAME == ARGV[2] {
  j = index($0, " "); r = substr($0, j + 1); p = record_path(r)
  have[p] = r
  if (substr($0, 1, j - 1) + 0 >= start + 0) wrote[p] = record_key(r, 0)
  next
}
{
  p = record_path($0)
  if (($0 in unchanged) || ((p in wrote) && wrote[p] == record_key($0, 1))) { kept[p] = 1; print }
}
END { for (p in have) if (!(p in kept)) print have[p] > dirty }
