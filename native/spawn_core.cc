// spawn_core: filled in by its feature.
