"""The option tables of the programs the policy approves (the notation is ``vaultops.policy.options``'s).

Only what is listed is known: an option missing here is escalated as ``unknown``.  The options that run
code are listed on purpose (``!``), so that the reason names them; those that write (``=w``) or read
(``=r``) a path are judged as writes and reads of it.
"""

from __future__ import annotations

from vaultops.policy.options import Options, merge, table

_COMMON = "--help --version"

CAT = table(
    f"-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --number --squeeze-blank --show-ends "
    f"--show-tabs --show-nonprinting {_COMMON}"
)
HEAD = table(
    f"-n= -c= -q -v -z --lines= --bytes= --quiet --silent --verbose --zero-terminated -f -F --follow? "
    f"--retry --pid= -s= --sleep-interval= --max-unchanged-stats= {_COMMON}",
    numeric=True,
)
WC = table(
    f"-c -m -l -L -w --bytes --chars --lines --max-line-length --words --files0-from=r --total= {_COMMON}"
)
LS = table(
    "-1 -a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -I= -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -T= -u "
    "-U -v -w= -x -X -Z -@ -e -O -P --all --almost-all --author --escape --block-size= --ignore-backups "
    "--color? --colour? --directory --dired --classify? --file-type --format= --full-time "
    "--group-directories-first --no-group --human-readable --si --dereference-command-line "
    "--dereference-command-line-symlink-to-dir --hide= --hyperlink? --indicator-style= --inode --ignore= "
    "--kibibytes --dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars "
    f"--quote-name --quoting-style= --reverse --recursive --size --sort= --time= --time-style= --tabsize= "
    f"--width= --context --zero {_COMMON}"
)
EZA = table(
    "-1 -a -A -b -B -d -D -F -g -G -h -H -i -l -L= -m -n -r -R -s= -S -t= -T -u -U -x -X -@ --all --long "
    "--tree --level= --git --grid --oneline --reverse --sort= --icons? --color? --colour? --header --binary "
    "--bytes --group-directories-first --no-permissions --no-user --no-time --no-filesize --classify? "
    f"--recurse --list-dirs --only-dirs --only-files --ignore-glob= --git-ignore --extended {_COMMON}"
)
DU = table(
    "-a -b -c -d= -D -h -H -k -l -L -m -P -s -S -t= -x -X=r -0 -B= -I= -A -g --all --apparent-size "
    "--block-size= --bytes --total --max-depth= --dereference-args --human-readable --inodes --count-links "
    "--dereference --no-dereference --null --separate-dirs --si --summarize --threshold= --time? "
    f"--time-style= --exclude= --exclude-from=r --one-file-system --files0-from=r {_COMMON}"
)
CUT = table(
    f"-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= --complement "
    f"--only-delimited --output-delimiter= --zero-terminated {_COMMON}"
)
STAT = table(
    f"-L -f -c= -t -x -r -s -l -n -q -F --format= --printf= --terse --dereference --file-system "
    f"--cached= {_COMMON}"
)
FILE = table(
    "-b -i -L -h -z -Z -k -s -r -N -0 -p -E -l -I -e= -F= -P= -f=r -m=r --mime --mime-type --mime-encoding "
    f"--brief --files-from=r --magic-file=r --dereference --no-dereference --keep-going --special-files "
    f"--uncompress --exclude= --separator= {_COMMON}"
)
TREE = table(
    "-a -d -l -f -x -L= -R -P= -I= -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -n -C -A -S -X -J -H= -T= "
    "-o=w --gitignore --noreport --si --du --dirsfirst --filesfirst --charset= --filelimit= --prune "
    f"--matchdirs --ignore-case --sort= --fromfile --info --metafirst {_COMMON}"
)
OD = table(
    "-A= -j= -N= -S? -t= -v -w? -a -b -c -d -f -i -l -o -s -x --address-radix= --skip-bytes= --read-bytes= "
    f"--strings? --format= --output-duplicates --width? --traditional --endian= {_COMMON}"
)
XXD = table(
    "-a -b -C -e -E -g= -h -i -l= -n= -o= -p -ps -plain -postscript -r -revert -R= -s= -seek= -u -c= "
    "-cols= -len= -d -autoskip -bits -include -v -version"
)
HEXDUMP = table(f"-b -c -C -d -o -x -X -e= -f=r -n= -s= -v -L? --canonical --length= --skip= {_COMMON}")
STRINGS = table(
    "-a -d -f -n= -t= -e= -o -w -s= -T= -U= --all --data --print-file-name --bytes= --radix= --encoding= "
    f"--target= --output-separator= --unicode= --include-all-whitespace {_COMMON}",
    numeric=True,
)
SUMS = table(
    "-b -c -t -z -w -l= -a= -q -r -s= -p -x -0 --binary --check --tag --text --zero --ignore-missing --quiet "
    f"--status --strict --warn --algorithm= --length= --base64 --raw --untagged --portable --UNIVERSAL "
    f"{_COMMON}"
)
READLINK = table(
    "-f -e -m -n -q -s -v -z -L -P --canonicalize --canonicalize-existing --canonicalize-missing "
    "--no-newline --quiet --silent --verbose --zero --relative-to= --relative-base= --logical --physical "
    f"--strip --no-symlinks {_COMMON}"
)
DIFF = table(
    "-a -b -B -c -C= -d -D= -e -E -f -F= -i -I= -l -L= -n -N -p -P -q -r -s -S= -t -T -u -U= -v -w -W= -x= "
    "-X=r -y -Z --normal --brief --report-identical-files --context? --unified? --ed --rcs --side-by-side "
    "--left-column --suppress-common-lines --show-c-function --show-function-line= --label= --expand-tabs "
    "--initial-tab --tabsize= --suppress-blank-empty --paginate --new-file --unidirectional-new-file "
    "--ignore-case --ignore-tab-expansion --ignore-trailing-space --ignore-space-change --ignore-all-space "
    "--ignore-blank-lines --ignore-matching-lines= --text --strip-trailing-cr --ifdef= --GTYPE-group-format= "
    "--line-format= --LTYPE-line-format= --old-line-format= --new-line-format= --unchanged-line-format= "
    "--minimal --horizon-lines= --speed-large-files --recursive --no-dereference --exclude= "
    "--exclude-from=r --starting-file= --from-file=r --to-file=r --color? --palette= --width= "
    f"--no-ignore-file-name-case --ignore-file-name-case {_COMMON}",
    numeric=True,
)
DIFF3 = table(
    f"-A -e -E -x -X -3 -i -m -T -a --merge --text --label= --initial-tab --strip-trailing-cr "
    f"--diff-program=! {_COMMON}"
)
SDIFF = merge(DIFF, table("-o=w --output=w --diff-program=!"))
CMP = table(f"-b -i= -l -n= -s --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent {_COMMON}")
COMM = table(
    f"-1 -2 -3 -i -z --check-order --nocheck-order --output-delimiter= --total --zero-terminated {_COMMON}"
)
UNIQ = table(
    "-c -d -D -f= -i -s= -u -w= -z --count --repeated --all-repeated? --skip-fields= --group? --ignore-case "
    f"--skip-chars= --unique --zero-terminated --check-chars= {_COMMON}",
    numeric=True,
)
PASTE = table(f"-d= -s -z --delimiters= --serial --zero-terminated {_COMMON}")
JOIN = table(
    f"-a= -e= -i -j= -o= -t= -v= -1= -2= -z --check-order --nocheck-order --header --ignore-case "
    f"--zero-terminated {_COMMON}"
)
ZCAT = table(f"-c -d -f -q -v -l -t -n -N -k -S= --stdout --force --quiet --verbose --list --test {_COMMON}")
GETFACL = table(
    f"-a -d -c -e -E -s -R -L -P -t -n -p --absolute-names --access --default --omit-header "
    f"--all-effective --no-effective --skip-base --recursive --logical --physical --tabular "
    f"--numeric {_COMMON}"
)
PR = table(
    "-a -c -d -D= -e? -f -F -h= -i? -J -l= -m -n? -N= -o= -r -s? -S? -t -T -v -w= -W= --across "
    f"--show-control-chars --double-space --date-format= --expand-tabs? --form-feed --header= --length= "
    f"--merge --number-lines? --first-line-number= --indent= --no-file-warnings --separator? "
    f"--sep-string? --omit-header --omit-pagination --show-nonprinting --width= --page-width= --columns= "
    f"{_COMMON}",
    numeric=True,
)
ICONV = table(f"-f= -t= -c -l -s -o=w --from-code= --to-code= --list --output=w --silent {_COMMON}")
BASE64 = table(f"-d -D -i -w= -b= -o=w --decode --ignore-garbage --wrap= --break= --output=w {_COMMON}")
BAT = table(
    "-p -P -n -l= -A -H= -r= -d -f -u -s --plain --paging= --color= --style= --theme= --language= "
    "--line-range= --highlight-line= --show-all --number --wrap= --tabs= --pager=! --decorations= --diff "
    f"--list-languages --list-themes --force-colorization --file-name= --italic-text= --unbuffered "
    f"--squeeze-blank --terminal-width= --chop-long-lines {_COMMON}"
)
DELTA = table(
    f"-s -n --side-by-side --line-numbers --dark --light --paging= --syntax-theme= --width= "
    f"--no-gitconfig --features= --navigate --hyperlinks {_COMMON}"
)
FD = table(
    "-H -I -u -s -i -g -F -a -l -L -p -0 -1 -q -e= -t= -E= -d= -S= -o= -c= -j= --hidden --no-ignore "
    "--no-ignore-vcs --unrestricted --case-sensitive --ignore-case --glob --regex --fixed-strings "
    "--absolute-path --list-details --follow --full-path --print0 --extension= --type= --exclude= "
    "--max-depth= --min-depth= --exact-depth= --size= --changed-within= --changed-before= --newer= --older= "
    "--owner= --color= --threads= --max-results= --base-directory= --path-separator= --search-path= "
    "--ignore-file=r --strip-cwd-prefix? --quiet --show-errors --prune --format= -x=! --exec=! -X=! "
    f"--exec-batch=! {_COMMON}"
)
LOOK = table(f"-b -d -f -t= --alphanum --ignore-case --terminate= {_COMMON}")
WDIFF = table(f"-1 -2 -3 -w= -x= -y= -z= -n -s -i -l -a -p -t -d {_COMMON}")
ICDIFF = table(
    f"-N -U= -W -H -r --cols= --no-headers --highlight --label= --recursive --strip-trailing-cr "
    f"--tabsize= --whole-file --line-numbers --exclude-lines= --color-map= {_COMMON}"
)
LESS = table(
    "-R -r -S -N -n -F -X -i -I -M -m -e -E -K -s -c -C -f -Q -q -w -W -g -G -J -a -B -d -L -u -U -V "
    "-x= -j= -p= -P= -b= -y= -z= -h= -t= -T=r -k=r -o=w -O=w -D= --RAW-CONTROL-CHARS --raw-control-chars "
    "--chop-long-lines --quit-if-one-screen --no-init --LINE-NUMBERS --line-numbers --ignore-case "
    "--IGNORE-CASE --log-file=w --LOG-FILE=w --lesskey-file=r --tabs= --pattern= --prompt= --quit-at-eof "
    f"--QUIT-AT-EOF --squeeze-blank-lines --no-lessopen --mouse --wordwrap --incsearch {_COMMON}",
    numeric=True,
)
MORE = table(
    f"-d -f -l -c -p -s -u -e -n= --silent --logical --no-pause --print-over --clean-print "
    f"--squeeze --plain --exit-on-eof --lines= {_COMMON}",
    numeric=True,
)

GREP = table(
    "-E -F -G -P -e= -f=r -i -y -v -w -x -c -L -l -m= -o -q -s -b -H -h -n -T -Z -z -A= -B= -C= -a -I -d= "
    "-D= -r -R -U -u -V --color? --colour? --label= --include= --exclude= --exclude-from=r --exclude-dir= "
    "--line-buffered --null-data --null --no-filename --with-filename --line-number --count "
    "--files-with-matches --files-without-match --only-matching --quiet --silent --no-messages "
    "--byte-offset --initial-tab --text --binary-files= --devices= --directories= --recursive "
    "--dereference-recursive --ignore-case --no-ignore-case --invert-match --word-regexp --line-regexp "
    "--max-count= --after-context= --before-context= --context= --extended-regexp --fixed-strings "
    f"--basic-regexp --perl-regexp --regexp= --file=r --binary --unix-byte-offsets {_COMMON}",
    numeric=True,
)
RG = table(
    "-e= -f=r -r= -g= -t= -T= -n -N -i -s -S -w -x -v -l -c -C= -A= -B= -m= -o -u -L -F -M= -d= -j= -P -U "
    "-H -I -0 -p -q -a -b -z -E= --regexp= --file=r --replace= --glob= --iglob= --type= --type-not= "
    "--type-add= --type-clear= --hidden --no-ignore --no-ignore-vcs --no-ignore-parent --no-ignore-dot "
    "--no-ignore-global --no-ignore-exclude --no-ignore-files --ignore-file=r --follow --fixed-strings "
    "--json --vimgrep --files --files-with-matches --files-without-match --count --count-matches --color= "
    "--colors= --sort= --sortr= --max-columns= --max-columns-preview --max-depth= --max-filesize= "
    "--threads= --pcre2 --multiline --multiline-dotall --heading --no-heading --with-filename "
    "--no-filename --null --pretty --quiet --stats --trim --column --line-number --no-line-number "
    "--context-separator= --field-match-separator= --field-context-separator= --passthru --no-messages "
    "--text --binary --smart-case --case-sensitive --ignore-case --word-regexp --line-regexp "
    "--invert-match --only-matching --debug --type-list --no-config --glob-case-insensitive --encoding= "
    "--crlf --null-data --one-file-system --byte-offset --unrestricted --include-zero --max-count= "
    "--after-context= --before-context= --context= --search-zip --no-unicode --engine= --auto-hybrid-regex "
    f"--pre=! --pre-glob= --hostname-bin=! --hyperlink-format= {_COMMON}",
    numeric=True,
)
AG = merge(
    GREP,
    table(
        "-Q -S -g= -G= -t -u -U -W= -z --literal --smart-case --hidden --skip-vcs-ignores "
        "--ignore= --ignore-dir= --pager=! --depth= --search-zip --vimgrep --nocolor"
    ),
)
ACK = merge(
    GREP,
    table(
        "-k -K -Q -S -g= -t= --type= --ignore-dir= --noignore-dir= --pager=! --nopager "
        "--noenv --smart-case --literal --sort-files"
    ),
)
UGREP = merge(
    GREP,
    table(
        "-Q -S -g= -t= -O= -M= -%  -+ -. --filter=! --pager=! --save-config=w --config=r "
        "--hidden --ignore-files? --glob= --file-type= --file-extension= --bool --tree"
    ),
)
JQ = table(
    "-r -j -a -c -n -e -s -S -C -M -R -L= --tab --indent= --arg=2 --argjson=2 --slurpfile=2r --rawfile=2r "
    "--args --jsonargs -f=r --from-file=r --raw-output --raw-output0 --join-output --ascii-output "
    "--compact-output --null-input --exit-status --slurp --sort-keys --color-output --monochrome-output "
    f"--raw-input --seq --stream --stream-errors -h -V --build-configuration {_COMMON}"
)
YQ = table(
    "-r -e -n -P -C -M -N -j -o= -p= -I= -s= -i --inplace --output-format= --input-format= --prettyPrint "
    "--exit-status --null-input --split-exp= --from-file=r --expression= --no-doc --unwrapScalar? "
    f"--indent= --front-matter= --header-preprocess? --tsv --csv -V {_COMMON}"
)

SORT = table(
    "-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z -k= -t= -o=w -S= -T= --parallel= --files0-from=r "
    "--compress-program=! --random-source=r --batch-size= --debug --ignore-leading-blanks "
    "--dictionary-order --ignore-case --general-numeric-sort --human-numeric-sort --ignore-nonprinting "
    "--month-sort --numeric-sort --random-sort --reverse --version-sort --check? --merge --stable --unique "
    f"--zero-terminated --key= --field-separator= --output=w --buffer-size= --temporary-directory= --sort= "
    f"{_COMMON}"
)
TEE = table(f"-a -i -p --append --ignore-interrupts --output-error? {_COMMON}")
TOUCH = table(
    f"-a -c -d= -f -h -m -r=r -t= --date= --reference=r --no-create --no-dereference --time= {_COMMON}"
)
MKDIR = table(f"-p -v -m= -Z --parents --verbose --mode= --context? {_COMMON}")
RMDIR = table(f"-p -v --parents --verbose --ignore-fail-on-non-empty {_COMMON}")
TRUNCATE = table(f"-c -o -r=r -s= --size= --reference=r --no-create --io-blocks {_COMMON}")
MKFIFO = table(f"-m= -Z --mode= --context? {_COMMON}")
CHMOD = table(
    "-R -v -c -f -h -H -L -P --recursive --verbose --changes --silent --quiet --reference=r "
    f"--no-dereference --dereference --preserve-root --no-preserve-root --from= {_COMMON}"
)
CHATTR = table(f"-R -V -f -v= -p= {_COMMON}")
SETFACL = table(
    f"-m= -x= -M=r -X=r -b -k -R -d -n -L -P --set= --set-file=r --modify= --remove= --mask "
    f"--restore=r --test --recursive {_COMMON}"
)
RM = table(
    f"-r -R -f -i -I -d -v --recursive --force --dir --verbose --interactive? --one-file-system "
    f"--no-preserve-root --preserve-root? {_COMMON}"
)
SHRED = table(
    f"-f -n= -s= -u -v -x -z --iterations= --size= --remove? --zero --force --verbose --exact "
    f"--random-source=r {_COMMON}"
)
_COPY = (
    "-b -f -i -n -S= -t= -T -u -v -Z --backup? --force --interactive --no-clobber --strip-trailing-slashes "
    f"--suffix= --target-directory= --no-target-directory --update? --verbose {_COMMON}"
)
CP = table(
    f"{_COPY} -a -d -H -l -L -P -p -R -r -s -x --archive --link --dereference --no-dereference --preserve? "
    "--no-preserve= --parents --recursive --reflink? --remove-destination --sparse= --symbolic-link "
    "--one-file-system --attributes-only --copy-contents --debug --keep-directory-symlink"
)
MV = table(f"{_COPY} --exchange --no-copy")
LN = table(f"{_COPY} -d -F -L -n -P -r -s --logical --no-dereference --physical --relative --symbolic")
INSTALL = table(
    f"{_COPY} -c -C -d -D -g= -m= -o= -p -s --strip-program=! --compare --directory --group= --mode= "
    "--owner= --preserve-timestamps --strip --preserve-context"
)
SED = table(
    "-n -e= -f=r -E -r -s -u -z -l= -b --posix --debug --sandbox --expression= --file=r --line-length= "
    f"--null-data --zero-terminated --separate --unbuffered --regexp-extended --quiet --silent "
    f"--follow-symlinks --binary {_COMMON}"
)
AWK = table(
    "-f=r -v= -F= -b -c -C -d? -D? -e= -E=r -g -h -i= -l= -L? -M -n -N -o? -O -p? -P -r -s -S -t -V "
    "--file=r --assign= --field-separator= --characters-as-bytes --traditional --copyright --dump-variables? "
    "--debug? --source= --exec=r --gen-pot --include= --load= --lint? --bignum --use-lc-numeric "
    f"--non-decimal-data --pretty-print? --optimize --profile? --posix --re-interval --no-optimize "
    f"--sandbox --lint-old --csv {_COMMON}"
)
TAR = table(
    "-A -c -d -r -t -u -x -a -z -j -J -Z -v -f= -C= -p -P -h -k -m -O -S -W -U -B -G -i -M -o -s -l -w -b= "
    "-g=w -K= -L= -N= -V= -H= -T=r -X=r -I=! -F=! --catenate --concatenate --create --diff --compare "
    "--delete --append --list --test-label --update --extract --get --file= --directory= --gzip --gunzip "
    "--ungzip --bzip2 --xz --lzip --lzma --lzop --zstd --compress --uncompress --auto-compress --verbose "
    "--totals? --one-file-system --dereference --hard-dereference --absolute-names --keep-old-files "
    "--skip-old-files --keep-newer-files --overwrite --overwrite-dir --no-overwrite-dir --to-stdout "
    "--same-owner --no-same-owner --same-permissions --preserve-permissions --no-same-permissions "
    "--numeric-owner --owner= --group= --mode= --mtime= --sort= --format= --exclude= --exclude-from=r "
    "--files-from=r --exclude-vcs --exclude-vcs-ignores --exclude-caches --exclude-caches-all "
    "--exclude-backups --transform= --xform= --strip-components= --wildcards --no-wildcards --anchored "
    "--no-anchored --null --no-null --verbatim-files-from --recursion --no-recursion --warning= "
    "--ignore-failed-read --ignore-zeros --checkpoint? --show-transformed-names --force-local "
    "--blocking-factor= --record-size= --label= --newer= --after-date= --newer-mtime= --level= "
    "--listed-incremental=w --incremental --sparse --remove-files --interactive --confirmation "
    "--use-compress-program=! --to-command=! --checkpoint-action=! --info-script=! --new-volume-script=! "
    f"--rmt-command=! --rsh-command=! --index-file=w --unlink-first --recursive-unlink --full-time "
    f"--utc --quoting-style= --no-xattrs --xattrs --acls --no-acls --selinux --posix {_COMMON}"
)
ZIP = table(
    "-r -q -v -j -0 -1 -2 -3 -4 -5 -6 -7 -8 -9 -x= -i= -@ -m -u -f -d -e -P= -y -D -X -o -l -ll -F -FF -A "
    "-J -b= -n= -t= -tt= -z -O=w --out=w -sf -su -dc -db -dg -g -k -L -h -R -UN= -T -TT=! --unzip-command=! "
    "--recurse-paths --quiet --verbose --junk-paths --move --update --freshen --delete --encrypt "
    f"--password= --symlinks --no-dir-entries --no-extra --test --grow --exclude= --include= {_COMMON}"
)
UNZIP = table(
    f"-l -t -v -Z -d= -o -n -q -qq -j -x= -p -c -a -aa -b -C -L -M -P= -u -f -X -K -W -U -V -T -z {_COMMON}"
)
COMPRESS = table(
    "-c -d -f -k -l -n -N -q -r -S= -t -v -z -e -T= -0 -1 -2 -3 -4 -5 -6 -7 -8 -9 -o=w --fast --best "
    "--stdout --to-stdout --decompress --uncompress --force --keep --list --quiet --recursive --suffix= "
    f"--test --verbose --threads= --rm=! --files=r --format= --ultra --long? {_COMMON}"
)
MKTEMP = table(f"-d -u -q -t -p= --directory --dry-run --quiet --suffix= --tmpdir? {_COMMON}")
PATCH = table(
    "-p= -i=r --input=r -o=w --output=w -R -N -f -s -t -u -c -e -n -E -l -b -B= -d= -F= -r=w -z= -V= "
    "--strip= --dry-run --reverse --forward --batch --force --silent --quiet --unified --context --normal "
    "--ed --backup --no-backup-if-mismatch --backup-if-mismatch --remove-empty-files --ignore-whitespace "
    f"--prefix= --directory= --fuzz= --reject-file=w --suffix= --verbose --merge? --posix {_COMMON}"
)
DATE = table(
    "-d= -f=r -I? -R -r=r -u -j -n -v= -z= --date= --file=r --iso-8601? --rfc-email --rfc-3339= "
    f"--reference=r --utc --universal --debug {_COMMON}"
)
PS = table(
    "-A -a -d -e -f -F -H -j -l -L -M -N -T -w -x -y -c -h -m -V -o= -O= -p= -q= -u= -U= -g= -G= -C= -t= -s= "
    f"-k= --pid= --ppid= --sort= --forest --no-headers --headers --format= --user= --group= --cols= "
    f"--width= --lines= --tty= --deselect {_COMMON}"
)
MAN = table(
    f"-k -f -a -w -W -K -s= -S= -L= -M= -C=r --apropos --whatis --where --path --all --location "
    f"--sections= --locale= --manpath= -P=! --pager=! -H! --html! -l=r --local-file=r {_COMMON}"
)
WHICH = table(f"-a -s --all --skip-alias --skip-functions --read-alias --read-functions -i {_COMMON}")

# Wrappers: their own options (the command they run is judged on its own).
WRAPPERS: dict[str, Options] = {
    "env": table(
        f"-i -0 -v -u= -C= -S= --ignore-environment --null --unset= --chdir= --split-string= "
        f"--debug --list-signal-handling --block-signal? --default-signal? --ignore-signal? "
        f"{_COMMON}"
    ),
    "nohup": table(_COMMON),
    "time": table(
        f"-f= -o=w -a -p -v -q --format= --output=w --append --portability --verbose --quiet {_COMMON}"
    ),
    "nice": table(f"-n= --adjustment= {_COMMON}", numeric=True),
    "ionice": table(f"-c= -n= -t --class= --classdata= --ignore {_COMMON}"),
    "timeout": table(
        f"-s= -k= -v -f -p --signal= --kill-after= --preserve-status --foreground --verbose {_COMMON}"
    ),
    "stdbuf": table(f"-i= -o= -e= --input= --output= --error= {_COMMON}"),
    "setsid": table(f"-c -f -w --ctty --fork --wait {_COMMON}"),
    "exec": table("-a= -c -l"),
    "command": table("-p -v -V"),
    "builtin": table(""),
    "xargs": table(
        "-0 -a=r -d= -E= -e? -I= -i? -L= -l? -n= -o -p -P= -r -s= -t -x --null --arg-file=r --delimiter= "
        "--eof? --replace? --max-lines? --max-args= --open-tty --interactive --max-procs= "
        f"--process-slot-var= --no-run-if-empty --max-chars= --show-limits --verbose --exit {_COMMON}"
    ),
    "flock": table(
        f"-s -x -e -n -u -o -F -w= -E= -c= --shared --exclusive --nonblock --unlock --close "
        f"--no-fork --timeout= --conflict-exit-code= --command= --verbose {_COMMON}"
    ),
    "caffeinate": table("-d -i -m -s -u -t= -w="),
    "unbuffer": table("-p"),
    "chronic": table("-e -v"),
    "watch": table(
        f"-n= -d? -t -b -e -g -c -x -p -w -q -r --interval= --differences? --no-title --beep "
        f"--errexit --chgexit --color --no-color --exec --precise --no-wrap {_COMMON}"
    ),
    "chrt": table(
        "-a -b -d -e -f -i -o -r -R -v -m -p -T= -P= -D= --all-tasks --batch --fifo --idle --other "
        "--rr --verbose --max --pid"
    ),
    "taskset": table("-a -c -p --all-tasks --cpu-list --pid"),
}

# curl: what a web request needs.  ``--variable``, ``--expand-*``, ``--unix-socket``, ``-n`` (the netrc's
# passwords) and the mail and FTP command options are not listed, so they are escalated; the values that
# name files with ``@`` (``-d @f``, ``-H @f``, ``-F a=@f``, ``-b file``, ``-w @f``) and the rerouting
# options are judged by the rule.
CURL = table(
    "-s --silent -S --show-error -L --location --location-trusted -f --fail --fail-with-body -i --include "
    "-I --head -v --verbose -k --insecure -G --get -O --remote-name --remote-name-all -J "
    "--remote-header-name -# --progress-bar -q --disable --compressed -N --no-buffer -4 -6 --ipv4 --ipv6 "
    "--http1.0 --http1.1 --http2 --http2-prior-knowledge --http3 -Z --parallel --create-dirs "
    "--no-progress-meter --retry-all-errors --retry-connrefused --globoff -g --ssl-reqd --tlsv1.2 "
    "--tlsv1.3 -R --remote-time --tcp-nodelay --no-keepalive --path-as-is --fail-early --show-headers "
    "--styled-output --no-styled-output -h -M --manual --anyauth --basic --digest --ntlm --negotiate "
    "--no-sessionid --post301 --post302 --post303 -j --junk-session-cookies --trace-time -V --version "
    "--help --raw --no-clobber --remove-on-error --skip-existing "
    "-X= --request= -A= --user-agent= -e= --referer= -u= --user= -U= --proxy-user= -m= --max-time= "
    "--connect-timeout= --retry= --retry-delay= --retry-max-time= -r= --range= -z= --time-cond= -Y= "
    "--speed-limit= -y= --speed-time= --limit-rate= --max-filesize= --max-redirs= --oauth2-bearer= "
    "--aws-sigv4= -C= --continue-at= --output-dir= --create-file-mode= --parallel-max= --url= -x= "
    "--proxy= --noproxy= --ciphers= --tls-max= --keepalive-time= --expect100-timeout= --rate= "
    "-w= --write-out= -d= --data= --data-binary= --data-ascii= --data-urlencode= --data-raw= --json= "
    "-F= --form= --form-string= -H= --header= --url-query= -b= --cookie= "
    "--resolve= --connect-to= --doh-url= --dns-servers= --interface= --local-port= "
    "-T=r --upload-file=r --netrc-file=r --etag-compare=r --cacert=r --capath=r --cert=r -E=r --key=r "
    "--crlfile=r --proxy-cacert=r -K=r --config=r "
    "-o=w --output=w -D=w --dump-header=w --trace=w --trace-ascii=w --stderr=w --libcurl=w --hsts=w "
    "--alt-svc=w --etag-save=w -c=w --cookie-jar=w"
)
