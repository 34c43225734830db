"""A stand-in for pandas with just what the loaded-memory workload uses, so the
pandas branch of the workload and of the restore check is tested where pandas is
not installed. Put its parent folder on PYTHONPATH."""


class Series:
    def __init__(self, values):
        self.values = list(values)

    def sum(self):
        return sum(self.values)


class DataFrame:
    def __init__(self, data):
        self.columns = {name: list(values) for name, values in data.items()}

    @property
    def shape(self):
        rows = len(next(iter(self.columns.values()))) if self.columns else 0
        return (rows, len(self.columns))

    def sum(self):
        return Series(sum(values) for values in self.columns.values())
