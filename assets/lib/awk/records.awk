# Functions shared by the awk programs of the mirrors' sync (lib/mirror-sync.sh runs them with this file first:
# mirror_awk). Their records are NUL-terminated. A walk record is `PATH//TYPE SIZE MTIME CTIME MODE UID GID LINK`
# (find -printf, mirror_sync_one); a copy's record is the same without CTIME (mirror_keep); a path record is `PATH`
# alone. PATH is `.` for the mirror's root and `./` and the path under it for an entry.

# record_path(r): the path of record r (what comes before its first //).
function record_path(r) {
  return substr(r, 1, index(r, "//") - 1)
}

# record_type(r): the type letter of record r (find's %y: d for a directory).
function record_type(r) {
  return substr(r, index(r, "//") + 2, 1)
}

# parent(p): the path of the directory that holds path p (./a for ./a/b, . for ./a), or "" when p has none (. itself).
function parent(p,   j) {
  j = match(p, /\/[^\/]*$/)
  return j > 1 ? substr(p, 1, j - 1) : ""
}

# under(p, set): 1 when a directory above path p (its parent, the parent's parent... up to .) is a key of the array
# set, else 0.
function under(p, set,   q) {
  for (q = parent(p); q != ""; q = parent(q)) if (q in set) return 1
  return 0
}

# record_key(r, walked): the fields of record r that a copy can match, `PATH//TYPE SIZE MTIME MODE UID GID LINK`, a
# directory's SIZE as - (a directory's size is its file system's, not the origin's); walked: 1 for a walk record,
# whose CTIME (the origin's, which no copy has) is left out, 0 for a copy's record. "" for a record with fewer fields.
function record_key(r, walked,   i, k, rest, n, j, v, type) {
  i = index(r, "//"); k = substr(r, 1, i + 1); rest = substr(r, i + 2)
  for (n = 1; n <= (walked ? 7 : 6); n++) {
    j = index(rest, " "); if (!j) return ""
    v = substr(rest, 1, j - 1); rest = substr(rest, j + 1)
    if (n == 1) type = v
    if (n == 2 && type == "d") v = "-"
    if (walked && n == 4) continue
    k = k v " "
  }
  return k rest
}
