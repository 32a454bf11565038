"""FriendlyCore's page code, one registered family folder (issue 33; docs/registry.md).

``page.py`` is its Explore page (``render(ds, spec, radius)``, found by ``live_pages`` as
``app/components/<family>/page.py``), ``live.py`` the live main panel and prefetch, ``triage.py``
the Data page's verdict, ``run.py`` its runs (config, stage, the private run through
``dpviz.run``, prefetch, redraw, Learn's demo). Nothing outside this folder imports it except the
pages that show FriendlyCore's own lesson (Data's verdict, Learn's demo).
"""
