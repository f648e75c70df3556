# What a sync removes (mirror_sync_one). Files: the records it copies, then the paths gone (path records). Prints
# the paths to remove, top-most only (none under another path it prints), and none under an entry that it copies as
# something other than a directory (rsync --force removed it with its directory). Needs records.awk.
BEGIN { RS = "\0"; ORS = "\0" }
# The entries copied as something other than a directory.
FILENAME == ARGV[1] { if (record_type($0) != "d") notdir[record_path($0)] = 1; next }
under($0, removed) || under($0, notdir) { next }
{ removed[$0] = 1; print }
