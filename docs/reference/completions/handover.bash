#!/bin/bash

__handover_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__handover_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__handover_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__handover_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_handover() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __handover_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    init|window|preflight|status|lookup|generate|exchange|handoff|client-secret|ingest|serve|query|reconcile|report|export|apply|verify|upgrade|backup|compact|checkpoint|prove|evidence|tiles|witness|erase|projections|simulator|demo|help)
        # Offer subcommand argument completions
        "_handover_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'init window preflight status lookup generate exchange handoff client-secret ingest serve query reconcile report export apply verify upgrade backup compact checkpoint prove evidence tiles witness erase projections simulator demo help' -- "${cur}"))
        ;;
    esac
}

_handover_init() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=(--client-id)
    non_repeating_options=(--ledger --team-id --role --on-account-deleted --sign-in-secret-file)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--team-id')
        return
        ;;
    '--client-id')
        return
        ;;
    '--role')
        __handover_add_completions -W 'sender'$'\n''recipient'
        return
        ;;
    '--on-account-deleted')
        __handover_add_completions -W 'erase'$'\n''keep'
        return
        ;;
    '--sign-in-secret-file')
        return
        ;;
    esac
}

_handover_window() {
    repeating_flags=()
    non_repeating_flags=(--correct --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of --accepted-at)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    '--accepted-at')
        return
        ;;
    esac
}

_handover_preflight() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --team-id --client-id --key-id --private-key --apple-base-url --users --transfers --sender-key --test-user --target --test-transfer-sub --format)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--team-id')
        return
        ;;
    '--client-id')
        return
        ;;
    '--key-id')
        return
        ;;
    '--private-key')
        return
        ;;
    '--apple-base-url')
        return
        ;;
    '--users')
        return
        ;;
    '--transfers')
        return
        ;;
    '--sender-key')
        return
        ;;
    '--test-user')
        return
        ;;
    '--target')
        return
        ;;
    '--test-transfer-sub')
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac
}

_handover_status() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --warn-days --format)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--warn-days')
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac
}

_handover_lookup() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --as --format)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--as')
        __handover_add_completions -W 'transfer-sub'$'\n''sub'$'\n''account-id'
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac
}

_handover_generate() {
    repeating_flags=()
    non_repeating_flags=(--retry-failed --dry-run --force --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --team-id --client-id --key-id --private-key --apple-base-url --users --target --out --concurrency --format --grace --max-retry-after --outage-limit --max-rate --metrics-file --breaker)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--team-id')
        return
        ;;
    '--client-id')
        return
        ;;
    '--key-id')
        return
        ;;
    '--private-key')
        return
        ;;
    '--apple-base-url')
        return
        ;;
    '--users')
        return
        ;;
    '--target')
        return
        ;;
    '--out')
        return
        ;;
    '--concurrency')
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''json'
        return
        ;;
    '--grace')
        return
        ;;
    '--max-retry-after')
        return
        ;;
    '--outage-limit')
        return
        ;;
    '--max-rate')
        return
        ;;
    '--metrics-file')
        return
        ;;
    '--breaker')
        return
        ;;
    esac
}

_handover_exchange() {
    repeating_flags=()
    non_repeating_flags=(--retry-failed --dry-run --force --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --team-id --client-id --key-id --private-key --apple-base-url --transfers --sender-key --receipt --out --concurrency --format --grace --max-retry-after --outage-limit --max-rate --metrics-file --breaker)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--team-id')
        return
        ;;
    '--client-id')
        return
        ;;
    '--key-id')
        return
        ;;
    '--private-key')
        return
        ;;
    '--apple-base-url')
        return
        ;;
    '--transfers')
        return
        ;;
    '--sender-key')
        return
        ;;
    '--receipt')
        return
        ;;
    '--out')
        return
        ;;
    '--concurrency')
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''json'
        return
        ;;
    '--grace')
        return
        ;;
    '--max-retry-after')
        return
        ;;
    '--outage-limit')
        return
        ;;
    '--max-rate')
        return
        ;;
    '--metrics-file')
        return
        ;;
    '--breaker')
        return
        ;;
    esac
}

_handover_handoff() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __handover_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    issue|confirm|receive)
        # Offer subcommand argument completions
        "_handover_handoff_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'issue confirm receive' -- "${cur}"))
        ;;
    esac
}

_handover_handoff_issue() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --target --out)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--target')
        return
        ;;
    '--out')
        return
        ;;
    esac
}

_handover_handoff_confirm() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --recipient-key)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--recipient-key')
        return
        ;;
    esac
}

_handover_handoff_receive() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --sender-key --receipt)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--sender-key')
        return
        ;;
    '--receipt')
        return
        ;;
    esac
}

_handover_client-secret() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--team-id --client-id --key-id --private-key --apple-base-url --lifetime)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--team-id')
        return
        ;;
    '--client-id')
        return
        ;;
    '--key-id')
        return
        ;;
    '--private-key')
        return
        ;;
    '--apple-base-url')
        return
        ;;
    '--lifetime')
        return
        ;;
    esac
}

_handover_ingest() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --jwks-url --jwks-file --apple-base-url --verify-at)
    __handover_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--jwks-url')
        return
        ;;
    '--jwks-file')
        return
        ;;
    '--apple-base-url')
        return
        ;;
    '--verify-at')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    1)
        __handover_add_completions -W 'notification'$'\n''sign-in'
        return
        ;;
    esac
}

_handover_serve() {
    repeating_flags=()
    non_repeating_flags=(--insecure-http --version -h --help)
    repeating_options=(--witness-log)
    non_repeating_options=(--ledger --jwks-url --jwks-file --apple-base-url --host --port --tls-cert --tls-key --sign-in-secret-file --rejection-budget --trusted-proxy --tiles --tiles-read-secret-file)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--jwks-url')
        return
        ;;
    '--jwks-file')
        return
        ;;
    '--apple-base-url')
        return
        ;;
    '--host')
        return
        ;;
    '--port')
        return
        ;;
    '--tls-cert')
        return
        ;;
    '--tls-key')
        return
        ;;
    '--sign-in-secret-file')
        return
        ;;
    '--rejection-budget')
        return
        ;;
    '--trusted-proxy')
        return
        ;;
    '--witness-log')
        return
        ;;
    '--tiles')
        return
        ;;
    '--tiles-read-secret-file')
        return
        ;;
    esac
}

_handover_query() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __handover_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    migrated|pending|user|state|failures|unmatched|events)
        # Offer subcommand argument completions
        "_handover_query_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'migrated pending user state failures unmatched events' -- "${cur}"))
        ;;
    esac
}

_handover_query_migrated() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of --limit)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    '--limit')
        return
        ;;
    esac
}

_handover_query_pending() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of --limit)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    '--limit')
        return
        ;;
    esac
}

_handover_query_user() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    esac
}

_handover_query_state() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of --limit)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    '--limit')
        return
        ;;
    esac
}

_handover_query_failures() {
    repeating_flags=()
    non_repeating_flags=(--by-class --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of --limit)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    '--limit')
        return
        ;;
    esac
}

_handover_query_unmatched() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of --limit)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    '--limit')
        return
        ;;
    esac
}

_handover_query_events() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=(--type)
    non_repeating_options=(--ledger --format --as-of --id --since --limit)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    '--id')
        return
        ;;
    '--type')
        return
        ;;
    '--since')
        return
        ;;
    '--limit')
        return
        ;;
    esac
}

_handover_reconcile() {
    repeating_flags=()
    non_repeating_flags=(--rows --version -h --help)
    repeating_options=(--packages)
    non_repeating_options=(--sender --sender-key --recipient --format --as-of)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--sender')
        return
        ;;
    '--packages')
        return
        ;;
    '--sender-key')
        return
        ;;
    '--recipient')
        return
        ;;
    '--format')
        __handover_add_completions -W 'table'$'\n''json'$'\n''csv'
        return
        ;;
    '--as-of')
        return
        ;;
    esac
}

_handover_report() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --as-of --html --sender)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''json'
        return
        ;;
    '--as-of')
        return
        ;;
    '--html')
        return
        ;;
    '--sender')
        return
        ;;
    esac
}

_handover_export() {
    repeating_flags=()
    non_repeating_flags=(--since-last --follow --include-personal-data --neutralize-formulas --no-neutralize-formulas --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --format --out --interval --slice --lock-wait)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--format')
        __handover_add_completions -W 'csv'$'\n''jsonl'$'\n''sqlite'$'\n''postgres'
        return
        ;;
    '--out')
        return
        ;;
    '--interval')
        return
        ;;
    '--slice')
        return
        ;;
    '--lock-wait')
        return
        ;;
    esac
}

_handover_apply() {
    repeating_flags=()
    non_repeating_flags=(--since-last --commit --version -h --help)
    repeating_options=(--set)
    non_repeating_options=(--ledger --to --table --key --where --users --undo --batch-size --format)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--to')
        return
        ;;
    '--table')
        return
        ;;
    '--key')
        return
        ;;
    '--set')
        return
        ;;
    '--where')
        return
        ;;
    '--users')
        return
        ;;
    '--undo')
        return
        ;;
    '--batch-size')
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''csv'$'\n''json'
        return
        ;;
    esac
}

_handover_verify() {
    repeating_flags=()
    non_repeating_flags=(--deep --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --public-key --checkpoint --format --scratch --fold-memory)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--public-key')
        return
        ;;
    '--checkpoint')
        return
        ;;
    '--format')
        __handover_add_completions -W 'text'$'\n''json'
        return
        ;;
    '--scratch')
        return
        ;;
    '--fold-memory')
        return
        ;;
    esac
}

_handover_upgrade() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --scratch --fold-memory)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--scratch')
        return
        ;;
    '--fold-memory')
        return
        ;;
    esac
}

_handover_backup() {
    repeating_flags=()
    non_repeating_flags=(--without-keys --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --out)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--out')
        return
        ;;
    esac
}

_handover_compact() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    esac
}

_handover_checkpoint() {
    repeating_flags=()
    non_repeating_flags=(--public-key --cosigned --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --out)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--out')
        return
        ;;
    esac
}

_handover_prove() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --checkpoint --out)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--checkpoint')
        return
        ;;
    '--out')
        return
        ;;
    esac
}

_handover_evidence() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __handover_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    write|verify)
        # Offer subcommand argument completions
        "_handover_evidence_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'write verify' -- "${cur}"))
        ;;
    esac
}

_handover_evidence_write() {
    repeating_flags=()
    non_repeating_flags=(--reveal --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --out --checkpoint --witness-policy --sender)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--out')
        return
        ;;
    '--checkpoint')
        return
        ;;
    '--witness-policy')
        return
        ;;
    '--sender')
        return
        ;;
    esac
}

_handover_evidence_verify() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--public-key --sender-key --recipient-key --witness-policy)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--public-key')
        return
        ;;
    '--sender-key')
        return
        ;;
    '--recipient-key')
        return
        ;;
    '--witness-policy')
        return
        ;;
    esac
}

_handover_tiles() {
    repeating_flags=()
    non_repeating_flags=(--entries --version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --out)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--out')
        return
        ;;
    esac
}

_handover_witness() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __handover_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    submit|add|remove|list|key)
        # Offer subcommand argument completions
        "_handover_witness_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'submit add remove list key' -- "${cur}"))
        ;;
    esac
}

_handover_witness_submit() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --timeout --attempts)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--timeout')
        return
        ;;
    '--attempts')
        return
        ;;
    esac
}

_handover_witness_add() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --key)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--key')
        return
        ;;
    esac
}

_handover_witness_remove() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    esac
}

_handover_witness_list() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    esac
}

_handover_witness_key() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    esac
}

_handover_erase() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --reason)
    __handover_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--reason')
        return
        ;;
    esac
}

_handover_projections() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __handover_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    rebuild)
        # Offer subcommand argument completions
        "_handover_projections_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'rebuild' -- "${cur}"))
        ;;
    esac
}

_handover_projections_rebuild() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--ledger --scratch --fold-memory)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--ledger')
        return
        ;;
    '--scratch')
        return
        ;;
    '--fold-memory')
        return
        ;;
    esac
}

_handover_simulator() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __handover_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    serve|register-team|transfer|revoke|email|mint-identity-token|mint-notification)
        # Offer subcommand argument completions
        "_handover_simulator_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'serve register-team transfer revoke email mint-identity-token mint-notification' -- "${cur}"))
        ;;
    esac
}

_handover_simulator_serve() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=(--outage)
    non_repeating_options=(--dir --host --port --token-lifetime --latency-ms --rate-429 --retry-after --rate-500 --rate-drop --revoked-fraction --revoke-tokens-after --refuse-tokens-after --seed --hold-after)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--dir')
        return
        ;;
    '--host')
        return
        ;;
    '--port')
        return
        ;;
    '--token-lifetime')
        return
        ;;
    '--latency-ms')
        return
        ;;
    '--rate-429')
        return
        ;;
    '--retry-after')
        return
        ;;
    '--rate-500')
        return
        ;;
    '--rate-drop')
        return
        ;;
    '--revoked-fraction')
        return
        ;;
    '--revoke-tokens-after')
        return
        ;;
    '--refuse-tokens-after')
        return
        ;;
    '--seed')
        return
        ;;
    '--outage')
        return
        ;;
    '--hold-after')
        return
        ;;
    esac
}

_handover_simulator_register-team() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=(--client-id)
    non_repeating_options=(--dir --team-id --key-id)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--dir')
        return
        ;;
    '--team-id')
        return
        ;;
    '--client-id')
        return
        ;;
    '--key-id')
        return
        ;;
    esac
}

_handover_simulator_transfer() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--dir --client-id --from --to --accepted-at --window-days)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--dir')
        return
        ;;
    '--client-id')
        return
        ;;
    '--from')
        return
        ;;
    '--to')
        return
        ;;
    '--accepted-at')
        return
        ;;
    '--window-days')
        return
        ;;
    esac
}

_handover_simulator_revoke() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--dir)
    __handover_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--dir')
        return
        ;;
    esac
}

_handover_simulator_email() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--dir --team-id)
    __handover_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--dir')
        return
        ;;
    '--team-id')
        return
        ;;
    esac
}

_handover_simulator_mint-identity-token() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--dir --client-id --sub --transfer-sub --email --nonce --lifetime)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--dir')
        return
        ;;
    '--client-id')
        return
        ;;
    '--sub')
        return
        ;;
    '--transfer-sub')
        return
        ;;
    '--email')
        return
        ;;
    '--nonce')
        return
        ;;
    '--lifetime')
        return
        ;;
    esac
}

_handover_simulator_mint-notification() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--dir --client-id --type --sub --email)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--dir')
        return
        ;;
    '--client-id')
        return
        ;;
    '--type')
        return
        ;;
    '--sub')
        return
        ;;
    '--email')
        return
        ;;
    esac
}

_handover_demo() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--users --directory --seed)
    __handover_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--users')
        return
        ;;
    '--directory')
        return
        ;;
    '--seed')
        return
        ;;
    esac
}

_handover_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __handover_offer_flags_options -1
}

complete -o filenames -F _handover handover
