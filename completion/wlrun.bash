# bash completion for wlrun. Everything it offers comes from wlrun itself, so that it cannot
# drift from the binary: subcommands and options from `wlrun --help` (docs/cli.md) and
# `wlrun TOOL --help`, a scenario's parameters after -p from `wlrun SCRIPT --dry-run --format json`.
# The values of the options that take one of a fixed set are listed below (_wlrun_values).

# the subcommands: the words after "wlrun" in the help's USAGE section
_wlrun_subcommands() {
  "$1" --help 2>/dev/null | sed -n '/^USAGE/,/^$/s/^ *wlrun \([a-z][a-z]*\).*/\1/p' | sort -u
}

# a subcommand's own words ("add show trend blame" for history), from "wlrun TOOL a|b|c" in USAGE
_wlrun_verbs() {
  "$1" --help 2>/dev/null | sed -n "/^USAGE/,/^\$/s/^ *wlrun $2 \\([a-z][a-z|]*|[a-z|]*\\).*/\\1/p" | tr '|' '\n'
}

# options at the start of the help's lines: "    -o, --output FILE", "    --a, --b", "  ...;  --device N"
_wlrun_options_in() {
  grep -oE '(^ +|, |  )--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,]*//' | sort -u
}

_wlrun_options() {
  if [ -n "$2" ]; then
    "$1" "$2" --help 2>/dev/null | _wlrun_options_in
  else
    "$1" --help 2>/dev/null | sed -n '/^OPTIONS/,/^[A-Z]/p' | _wlrun_options_in
  fi
}

# a scenario's parameter names, from its dry run's configurations
_wlrun_params() {
  "$1" "$2" --dry-run --format json 2>/dev/null |
    sed -n '/"params": {/,/}/s/^ *"\([^"]*\)": .*/\1/p' | grep -vx params | sort -u
}

# the values of an option that takes one of a fixed set ($1: the subcommand, "" for a run; $2:
# the option), as wlrun's option tables have them: a run's in src/base/settings.c (mode, format,
# compiler, lock_clocks, nvtx), each tool's in lua/wlrun/tools/ (compare's out_formats, export's
# time units, trace's dtypes, plot's kinds, the printers' formats); fails for any other option
_wlrun_values() {
  case $1:$2 in
    :--format|merge:--format|trace:--format) echo table plain csv markdown json;;
    compare:--format) echo table markdown json;;
    history:--format) echo text json markdown;;
    export:--format) echo gbench table plain csv markdown json;;
    export:--time-unit) echo ns us ms s;;
    :--mode) echo auto cold batch graph host cupti;;
    :--compiler) echo nvrtc nvcc;;
    :--lock-clocks) echo off base max;;
    :--nvtx) echo on off;;
    trace:--dtype) echo f32 tf32 bf16 f16;;
    plot:--kind) echo sweep hist ratio;;
    *) return 1;;
  esac
}

_wlrun() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local wl=${COMP_WORDS[0]} sub="" script="" i w
  wl=${wl/#\~/$HOME}
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    [ "$w" = "--" ] && { COMPREPLY=($(compgen -f -- "$cur")); return; } # the script's own arguments
    if [ $i = 1 ] && [[ $w != -* ]] && [[ $w != *.lua ]]; then sub=$w; fi
    [ -z "$script" ] && [[ $w == *.lua ]] && script=$w
  done
  [ "$sub" = run ] && sub=""
  case $prev in
    -p|--param)
      if [ -z "$sub" ] && [ -n "$script" ] && [ -f "$script" ]; then
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -S = -W "$(_wlrun_params "$wl" "$script")" -- "$cur"))
      fi
      return;;
    --cache-dir|--trace-dir|--html|--keep) # a directory
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -d -- "$cur")); return;;
    -o|--output|--resume|--db) # a file
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -f -- "$cur")); return;;
    --config) # a run's wlrun.ini (plot's --config is a configuration's index)
      if [ -z "$sub" ]; then compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); fi
      return;;
  esac
  local values
  if values=$(_wlrun_values "$sub" "$prev"); then
    COMPREPLY=($(compgen -W "$values" -- "$cur"))
    return
  fi
  if [ "$COMP_CWORD" = 1 ] && [[ $cur != -* ]]; then
    COMPREPLY=($(compgen -W "$(_wlrun_subcommands "$wl")" -- "$cur") $(compgen -f -X '!*.lua' -- "$cur"))
    compopt -o filenames 2>/dev/null
    local d; for d in $(compgen -d -- "$cur"); do COMPREPLY+=("$d"); done
    return
  fi
  if [ -n "$sub" ] && [ "$COMP_CWORD" = 2 ] && [[ $cur != -* ]]; then
    local verbs; verbs=$(_wlrun_verbs "$wl" "$sub")
    if [ -n "$verbs" ]; then COMPREPLY=($(compgen -W "$verbs" -- "$cur")); return; fi
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_wlrun_options "$wl" "$sub")" -- "$cur"))
    return
  fi
  compopt -o filenames 2>/dev/null
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _wlrun wlrun
