"""The functions `run_sql` may call: an allow-list per dialect, never a deny-list.

A function is allowed when the policy knows it computes a value from its arguments and the
rows: aggregates, window, conditional, math, string, date, JSON, array and series functions.
Everything else is refused, so a function that runs SQL given as text (``query``,
``ts_stat``, ``json_execute_serialized_sql``, ``query_to_xml``), reads files or the network,
takes locks, changes settings or the server (``pg_stat_reset``, replication slots, advisory
locks), or sleeps is refused without being named here.

Two name spaces: sqlglot's typed function nodes (by class name: sqlglot knows what they compute
and writes them back in the dialect's own spelling), and the names of the calls sqlglot keeps
as it found them (``exp.Anonymous``), per dialect.
"""

from __future__ import annotations

# sqlglot's typed function nodes that compute a value (their class names)
TYPED = frozenset(
    """
    All Any Columns Exists MatchAgainst
    Abs Acos AnyValue ApproxDistinct ApproxQuantile ArgMax ArgMin Array ArrayAgg ArrayAppend ArrayConcat
    ArrayContains ArrayDistinct ArrayFilter ArrayMax ArrayMin ArrayOverlaps ArrayPrepend ArrayRemove
    ArraySize ArraySlice ArrayToString Ascii Asin Atan Atan2 Avg BitLength BitwiseAndAgg BitwiseOrAgg
    BitwiseXorAgg Case Cast Cbrt Ceil Chr Coalesce Concat ConcatWs Contains Corr Cos Cot Count CountIf
    CovarPop CovarSamp CumeDist CurrentDatabase CurrentDate CurrentSchema CurrentSchemas CurrentTime
    CurrentTimestamp CurrentVersion Date DateAdd DateBin DateDiff DateFromParts DateTrunc Day DayOfMonth
    DayOfWeek DayOfWeekIso DayOfYear Dayname Decode DecodeCase Degrees DenseRank Elt Encode EndsWith Exp
    Explode ExplodingGenerateSeries Extract Factorial First FirstValue Flatten Floor Format FromBase64
    GenerateSeries Greatest GroupConcat Grouping Hex Hour If Initcap IsInf IsNan JSONArrayAgg
    JSONBObjectAgg JSONExtract JSONExtractScalar JSONKeys JSONObject JSONObjectAgg JSONStripNulls
    JSONType JarowinklerSimilarity JustifyDays JustifyHours JustifyInterval Kurtosis Lag Last LastDay
    LastValue Lead Least Left Length Levenshtein List Ln Localtimestamp Log LogicalAnd LogicalOr Lower
    MD5 MakeInterval Map MapKeys Max Median Min Minute Mode Month Monthname Normalize NthValue Ntile
    Nullif NumberToStr Overlay Pad ParseJSON PercentRank PercentileCont PercentileDisc Pi Pow Quantile
    Quarter Radians Rand Rank RegexpCount RegexpExtract RegexpExtractAll RegexpFullMatch RegexpInstr
    RegexpLike RegexpReplace RegexpSplit RegrAvgx RegrAvgy RegrCount RegrIntercept RegrR2 RegrSlope
    RegrSxx RegrSxy RegrSyy Repeat Replace Reverse Right Round RowNumber SHA SHA2 Second Sign Sin
    Skewness SortArray Space Split SplitPart Sqrt StartsWith Stddev StddevPop StddevSamp StrPosition
    StrToDate StrToTime StringToArray Struct StructExtract Stuff Substring Sum Tan TimeFromParts
    TimeToStr TimeToUnix TimestampDiff TimestampFromParts TimestampTrunc ToBase64 ToChar ToDays ToNumber
    Transform Translate Trim Trunc TryCast TsOrDsToDate TsOrDsToTimestamp Typeof Unhex Unicode
    UnixToTime Unnest Upper Uuid Variance VariancePop Week WeekOfYear WidthBucket Year
""".split()
)

_EVERY_DIALECT = """
    abs acos age array_agg array_length array_position array_to_string ascii asin atan atan2 avg bit_and
    bit_length bit_or bit_xor bool_and bool_or btrim cardinality cbrt ceil ceiling char_length
    character_length chr coalesce concat concat_ws corr cos cot count covar_pop covar_samp cume_dist
    current_date current_timestamp date_part date_trunc degrees dense_rank every exp extract factorial
    first_value floor gcd generate_series greatest grouping initcap lag last_value lcm lead least left
    length ln log log10 log2 lower lpad ltrim make_date max md5 min mod mode now nth_value ntile nullif
    octet_length overlay percent_rank percentile_cont percentile_disc pi position pow power radians
    random rank regexp_matches regexp_replace regr_avgx regr_avgy regr_count regr_intercept regr_r2
    regr_slope repeat replace reverse right round row_number rpad rtrim sha256 sign sin split_part sqrt
    starts_with stddev stddev_pop stddev_samp string_agg string_to_array strpos substr substring sum tan
    to_char to_date to_json to_timestamp translate trim trunc typeof unnest upper var_pop var_samp
    variance width_bucket
"""

# the names of calls sqlglot keeps as written, by dialect (lower case, without a schema)
NAMED: dict[str, frozenset[str]] = {
    "postgres": frozenset(
        (
            _EVERY_DIALECT
            + """
    any_value array_append array_cat array_dims array_fill array_lower array_prepend array_remove
    array_to_json array_to_tsvector array_upper bool_xor clock_timestamp current_database current_schema
    current_schemas date_add date_bin date_subtract daterange decode div encode erf erfc format
    format_type gen_random_uuid generate_subscripts int4range int8range isempty isfinite json_agg
    json_array_elements json_array_elements_text json_array_length json_build_array json_build_object
    json_each json_each_text json_extract_path json_extract_path_text json_object json_object_agg
    json_object_keys json_strip_nulls json_typeof jsonb_agg jsonb_array_elements
    jsonb_array_elements_text jsonb_array_length jsonb_build_array jsonb_build_object jsonb_each
    jsonb_each_text jsonb_extract_path jsonb_extract_path_text jsonb_insert jsonb_object
    jsonb_object_agg jsonb_object_keys jsonb_path_exists jsonb_path_match jsonb_path_query
    jsonb_path_query_array jsonb_path_query_first jsonb_pretty jsonb_set jsonb_strip_nulls jsonb_typeof
    justify_days justify_hours justify_interval lower_inc make_interval make_time make_timestamp
    make_timestamptz min_scale normalize num_nonnulls num_nulls numnode numrange pg_column_size
    pg_typeof phraseto_tsquery plainto_tsquery querytree quote_ident quote_literal quote_nullable
    range_agg regexp_count regexp_instr regexp_like regexp_match regexp_split_to_array
    regexp_split_to_table regexp_substr row_to_json scale setweight sha224 sha384 sha512
    statement_timestamp strip timezone to_hex to_jsonb to_number to_tsquery to_tsvector
    transaction_timestamp trim_scale ts_headline ts_rank ts_rank_cd tsrange tstzrange tsvector_to_array
    upper_inc version websearch_to_tsquery
"""
        ).split()
    ),
    "duckdb": frozenset(
        (
            _EVERY_DIALECT
            + """
    any_value approx_count_distinct approx_quantile arbitrary arg_max arg_min argmax argmin
    array_aggregate array_concat array_contains array_distinct array_extract array_filter array_has
    array_length array_reduce array_slice array_sort array_transform array_value bar base64 bin
    bit_count bitstring_agg cardinality century contains count_if count_star countif current_database
    current_date current_localtimestamp current_schema damerau_levenshtein date_add date_diff date_part
    date_sub dateadd datediff datepart datesub datetrunc day dayname dayofmonth dayofweek dayofyear
    decade duckdb_columns duckdb_constraints duckdb_databases duckdb_indexes duckdb_schemas
    duckdb_tables duckdb_types duckdb_views editdist3 element_at ends_with entropy epoch epoch_ms
    epoch_ns epoch_us era even favg first flatten format format_bytes formatreadablesize from_base64
    fsum gen_random_uuid generate_subscripts get_current_time get_current_timestamp group_concat hamming
    hash hex histogram hour if ifnull iif instr isfinite isinf isnan isodow isoyear jaccard
    jaro_similarity jaro_winkler_similarity json json_array json_array_length json_contains json_exists
    json_extract json_extract_path json_extract_path_text json_extract_string json_group_array
    json_group_object json_keys json_merge_patch json_object json_quote json_structure json_transform
    json_type json_valid json_value kahan_sum kurtosis last last_day lcase len levenshtein list
    list_aggr list_aggregate list_apply list_avg list_cat list_concat list_contains list_count
    list_distinct list_extract list_filter list_first list_has list_has_all list_has_any list_last
    list_max list_min list_position list_reduce list_resize list_reverse list_reverse_sort list_slice
    list_sort list_sum list_transform list_unique list_value list_zip listagg mad make_time
    make_timestamp make_timestamptz map map_entries map_extract map_keys map_values max_by md5_number
    median microsecond millisecond min_by minute mismatches month monthname nextafter nfc_normalize ord
    prefix printf product quantile quantile_cont quantile_disc quarter range regexp_extract
    regexp_extract_all regexp_full_match regexp_split_to_array regr_sxx regr_sxy regr_syy
    reservoir_quantile row second sha1 skewness str_split strftime string_split string_split_regex
    strip_accents strlen strptime struct_extract struct_insert struct_pack suffix sumkahan time_bucket
    to_base to_base64 to_days to_hours to_microseconds to_milliseconds to_minutes to_months to_seconds
    to_weeks to_years today try_strptime ucase unhex unicode uuid version week weekofyear xor year
    yearweek
"""
        ).split()
    ),
    "sqlite": frozenset(
        (
            _EVERY_DIALECT
            + """
    char date datetime format glob group_concat hex ifnull iif instr json json_array json_array_length
    json_each json_extract json_group_array json_group_object json_object json_tree json_type json_valid
    julianday like likely printf quote strftime substr time total trim unhex unicode unixepoch unlikely
    zeroblob
"""
        ).split()
    ),
    "mysql": frozenset(
        (
            _EVERY_DIALECT
            + """
    adddate char_length conv curdate curtime date_add date_format date_sub datediff day dayofmonth
    dayofweek dayofyear elt field find_in_set format from_unixtime group_concat hex hour if ifnull instr
    json_array json_contains json_extract json_keys json_length json_object json_unquote json_valid
    last_day lcase locate mid minute month quarter second space std str_to_date subdate sysdate
    timestampadd timestampdiff truncate ucase unhex unix_timestamp week weekday year
"""
        ).split()
    ),
}


def allowed(kind: str, name: str, dialect: str) -> bool:
    """Whether a function node of sqlglot class `kind` (a call kept as written: ``Anonymous``,
    named `name`) may run in `dialect`."""
    if kind == "Anonymous":
        return name in NAMED.get(dialect, frozenset())
    return kind in TYPED
