"""Smart fixes: the guided follow-up of each smart-fix issue (`followups`) and its fix scripts (`sql`).

Scripts are written to the store beside the catalog script (``<run>/fixes/``) and never run
against the source by cataloger.
"""
