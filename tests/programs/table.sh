# table.sh: the end of a row and of the table, for the table-driven shell
# tests (sourced: `. "$(dirname "$0")/table.sh"`).
#
#   row_end LABEL BAD DETAIL   BAD empty: "ok   [LABEL]: DETAIL";
#                              else "FAIL [LABEL]:BAD", counted, status 1
#                              (the caller may print more of what went wrong)
#   table_end NAME ROWS        "PASS NAME" and exit 0 if no row failed,
#                              else "FAIL NAME: n of ROWS rows" and exit 1
table_fails=0

row_end() {
	if [ -n "$2" ]; then
		echo "FAIL [$1]:$2"
		table_fails=$((table_fails + 1))
		return 1
	fi
	echo "ok   [$1]: $3"
}

table_end() {
	[ "$table_fails" = 0 ] && { echo "PASS $1"; exit 0; }
	echo "FAIL $1: $table_fails of $2 rows"
	exit 1
}
