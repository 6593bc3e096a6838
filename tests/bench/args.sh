# tests/bench/args.sh: the argument parser of the benchmark scripts (sourced, bash, after the
# script's `cd` to the repository root). The script sets its defaults, then:
#   bench_args SPEC... -- "$@"
# SPEC, one per option or positional argument the script takes:
#   --name=VAR[:TYPE]  an option with a value: `--name V` or `--name=V` sets VAR
#   --name=VAR:flag    an option without a value: sets VAR=1
#   VAR[:TYPE]         the next positional argument sets VAR (in the order given)
#   ...                any number of further positional arguments, kept in the array BENCH_REST
# TYPE: int (a whole number), num (a number, decimals allowed) or none (any string).
# -h / --help prints the script's header comment (its usage) and exits 0; an unknown option, a
# missing value, a value of the wrong type or one positional argument too many prints what is
# wrong and exits 2. A benchmark boots VMs for minutes: it must not start on a typo.

# bench_usage: the calling script's header comment, from line 2 to its first other line.
bench_usage() {
    local self=$0
    [ -f "$self" ] || self=tests/bench/${0##*/}
    sed -n '2,/^[^#]\|^$/{/^#/{s/^# \{0,1\}//;p}}' "$self"
}
bench_die() {
    echo "${0##*/}: $* (see --help)" >&2
    exit 2
}
# bench_set VAR TYPE VALUE WHAT: VAR=VALUE once VALUE is of TYPE (WHAT names it in an error)
bench_set() {
    case $2 in
    int) [[ $3 =~ ^[0-9]+$ ]] || bench_die "$4 must be a whole number, not '$3'" ;;
    num) [[ $3 =~ ^[0-9]+(\.[0-9]+)?$ ]] || bench_die "$4 must be a number, not '$3'" ;;
    '' | flag) ;;
    *) echo "bench_args: unknown type $2 of $1" >&2; exit 2 ;;
    esac
    printf -v "$1" %s "$3"
}
bench_args() {
    local specs=() positional=() rest=0 np=0 only_positional=0 spec a name var type val
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        specs+=("$1")
        case $1 in
        --*) ;;
        ...) rest=1 ;;
        *) positional+=("$1") ;;
        esac
        shift
    done
    [ $# -gt 0 ] && shift # the --
    BENCH_REST=()
    while [ $# -gt 0 ]; do
        a=$1
        shift
        if [ $only_positional = 0 ]; then
            case $a in
            -h | --help) bench_usage; exit 0 ;;
            --) only_positional=1; continue ;;
            --*)
                name=${a%%=*} var=""
                for spec in "${specs[@]}"; do
                    [ "${spec%%=*}" = "$name" ] && var=${spec#*=}
                done
                [ -n "$var" ] || bench_die "unknown option $name"
                type=""
                [[ $var == *:* ]] && type=${var#*:} var=${var%%:*}
                if [ "$type" = flag ]; then
                    [ "$a" = "$name" ] || bench_die "$name takes no value"
                    printf -v "$var" 1
                    continue
                fi
                if [ "$a" != "$name" ]; then
                    val=${a#*=}
                elif [ $# -gt 0 ]; then
                    val=$1
                    shift
                else
                    bench_die "$name needs a value"
                fi
                bench_set "$var" "$type" "$val" "$name"
                continue
                ;;
            -?*) bench_die "unknown option $a" ;;
            esac
        fi
        if [ $np -lt ${#positional[@]} ]; then
            spec=${positional[np]}
            np=$((np + 1))
            var=${spec%%:*} type=""
            [[ $spec == *:* ]] && type=${spec#*:}
            bench_set "$var" "$type" "$a" "$var"
        elif [ $rest = 1 ]; then
            BENCH_REST+=("$a")
        else
            bench_die "one argument too many: '$a'"
        fi
    done
}
