import dagster as dg

# One partition per table of the catalogued database.
tables_partitions = dg.DynamicPartitionsDefinition(name="tables")
