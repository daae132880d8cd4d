#!/bin/sh
# make-store-fixture.sh COMMIT VERSION: writes testdata/store-vVERSION.tar.gz,
# a small store made by COMMIT's lib/store (the layout of schema version
# VERSION), for schema_test.go's upgrade tests. Run from lib/store:
#   sh testdata/make-store-fixture.sh f982f2b 1
set -eu
commit=$1
version=$2
here=$(pwd)
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$top" archive "$commit" | tar -x -C "$tmp/"
# The maker, compiled against that commit's lib/store alone.
rm -f "$tmp"/lib/store/*_test.go
cp "$here/fixture_test.go" "$tmp/lib/store/"
mkdir "$tmp/store"
(cd "$tmp" && XCE_MAKE_STORE_FIXTURE="$tmp/store/db" go test -count=1 -run '^TestMakeStoreFixture$' ./lib/store/)
# The memtables' preallocated files are zeros until written: leave them
# out (Badger makes them again).
tar -C "$tmp/store" --exclude='*.mem' --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -czf "$here/testdata/store-v$version.tar.gz" db
echo "wrote testdata/store-v$version.tar.gz from $commit"
