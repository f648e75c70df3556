# The path of each directory among the walk records of its input (mirror_make_way). Needs records.awk.
BEGIN { RS = "\0"; ORS = "\0" }
record_type($0) == "d" { print record_path($0) }
