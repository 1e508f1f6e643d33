-- A killed `muse write` (issue 18 item 1) left its write run `running` for ever. A write run now records the
-- process that runs it, as model runs do (0014): its pid and that process's start time. The next write of the
-- book closes every `running` write run whose process is gone as `interrupted`; a row from before this
-- migration (no pid) that is still `running` was left by a process that no longer runs this schema.
ALTER TABLE write_runs ADD COLUMN pid INTEGER;
ALTER TABLE write_runs ADD COLUMN pid_started TEXT;
