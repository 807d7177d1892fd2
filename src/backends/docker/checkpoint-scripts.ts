/**
 * The bash the docker checkpoints run in the container (docs/branching.md),
 * each one exec with its values as positional arguments (never spliced into
 * the script). Exit codes the caller maps to a CheckpointError's reason are
 * below; anything else is `failed`, with what the script printed.
 */

/** The workspace is not a plain directory of the container's own filesystem. */
export const EXIT_BAD_WORKSPACE = 10;
/** The workspace holds more than workspaceMaxBytes (it prints its size). */
export const EXIT_TOO_LARGE = 12;
/** The checkpoint's directory is gone from the container. */
export const EXIT_NOT_FOUND = 13;

/**
 * `check ROOT MAX`: the root must be a directory (not a symlink) that no
 * mount covers or lies under: a rollback swaps it by rename, and a fork's
 * `docker commit` holds only the container's own filesystem. Then its size
 * (apparent, `du -sb`), refused past MAX before anything is copied.
 */
const CHECK = String.raw`
check() {
  local root=$1 max=$2 m
  [[ -d $root && ! -L $root ]] || { echo "is not a directory in the container"; exit ${EXIT_BAD_WORKSPACE}; }
  while read -r _ _ _ _ m _; do
    [[ $m == / ]] && continue
    if [[ $root == "$m" || $root == "$m"/* || $m == "$root"/* ]]; then
      echo "is on or holds the mount $m (a volume, bind or tmpfs); declare a directory of the container's own filesystem"
      exit ${EXIT_BAD_WORKSPACE}
    fi
  done < /proc/self/mountinfo
  bytes=$(du -s -b -- "$root" | cut -f1) || exit 1
  if (( bytes > max )); then echo "$bytes"; exit ${EXIT_TOO_LARGE}; fi
}
`;

/** Names beside the root a rollback uses (as on local): `.NAME.shellwright-restore-TAG` and `-old-TAG`. */
const BESIDE = String.raw`
beside() { printf '%s/.%s.shellwright-%s-%s' "$(dirname -- "$1")" "$(basename -- "$1")" "$2" "$3"; }
`;

/** `save SNAPSHOT DIR ID ROOT MAX`: DIR/ID (0700) gets the snapshot and, with a ROOT, a `cp -a` of it; prints `bytes=N`. */
export const SAVE = String.raw`${CHECK}
snap=$1 dir=$2 id=$3 root=$4 max=$5
umask 077
[[ -z $root ]] || check "$root" "$max"
mkdir -p -- "$dir" && mkdir -- "$dir/$id" || exit 1
if ! { cp -- "$snap" "$dir/$id/snapshot" && { [[ -z $root ]] || cp -a -- "$root" "$dir/$id/workspace"; }; }; then
  rm -rf -- "$dir/$id"
  exit 1
fi
[[ -z $root ]] || echo "bytes=$bytes"
`;

/** `fork-check ROOT MAX`: what a fork checks before it commits; prints `bytes=N`. */
export const FORK_CHECK = String.raw`${CHECK}
check "$1" "$2"
echo "bytes=$bytes"
`;

/**
 * `prepare SNAPSHOT DIR ID ROOT TAG`: copies the checkpoint beside what it
 * replaces (the snapshot's `.rollback-TAG`, the root's restore dir), so
 * that the swap is renames only. On failure it removes both.
 */
export const PREPARE = String.raw`${BESIDE}
snap=$1 dir=$2 id=$3 root=$4 tag=$5
[[ -d $dir/$id ]] || exit ${EXIT_NOT_FOUND}
pending=$snap.rollback-$tag
fresh=
[[ -z $root ]] || fresh=$(beside "$root" restore "$tag")
if ! { cp -- "$dir/$id/snapshot" "$pending" && { [[ -z $root ]] || cp -a -- "$dir/$id/workspace" "$fresh"; }; }; then
  rm -rf -- "$pending"
  [[ -z $fresh ]] || rm -rf -- "$fresh"
  exit 1
fi
`;

/**
 * `swap SNAPSHOT ROOT TAG`: the root aside, the restored copy in, the
 * snapshot in, renames back to back; a failed one puts the root back. The
 * old root is removed in the background (holding no output of the exec).
 */
export const SWAP = String.raw`${BESIDE}
snap=$1 root=$2 tag=$3
pending=$snap.rollback-$tag
fresh=
undo() { rm -rf -- "$pending"; [[ -z $fresh ]] || rm -rf -- "$fresh"; exit 1; }
if [[ -n $root ]]; then
  fresh=$(beside "$root" restore "$tag") old=$(beside "$root" old "$tag")
  if [[ -e $root || -L $root ]]; then
    mv -T -- "$root" "$old" || undo
    mv -T -- "$fresh" "$root" || { mv -T -- "$old" "$root"; undo; }
    nohup rm -rf -- "$old" </dev/null >/dev/null 2>&1 &
  else
    mv -T -- "$fresh" "$root" || undo
  fi
fi
mv -f -- "$pending" "$snap" || exit 1
`;

/** `undo-prepare SNAPSHOT ROOT TAG`: what PREPARE made, removed (an aborted or failed rollback). */
export const UNDO_PREPARE = String.raw`${BESIDE}
rm -rf -- "$1.rollback-$3"
[[ -z $2 ]] || rm -rf -- "$(beside "$2" restore "$3")"
`;

/** `put FILE`: stdin becomes FILE, renamed into place whole (a fast path there reloads a new inode). */
export const PUT = String.raw`umask 077; cat > "$1.fork" && mv -f -- "$1.fork" "$1"`;
