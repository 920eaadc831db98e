"""mkdocs hooks (named in mkdocs.yml): forward the build events to `helmbench.publish.site.Builder`.

Kept tiny because mkdocs loads this file by path; everything else is an ordinary module.
"""

from helmbench.publish.site import Builder

_builder = Builder()


def on_config(config):
    _builder.on_config(config)
    return config


def on_files(files, config):
    return _builder.on_files(files, config)


def on_page_markdown(markdown, page, config, files):
    return _builder.on_page_markdown(markdown, page, config, files)


def on_page_content(html, page, config, files):
    return _builder.on_page_content(html, page, config, files)


def on_page_context(context, page, config, nav):
    return _builder.on_page_context(context, page, config, nav)


def on_post_page(output, page, config):
    return _builder.on_post_page(output, page, config)


def on_post_template(output_content, template_name, config):
    return _builder.with_csp(output_content)  # 404.html


def on_env(env, config, files):
    return _builder.on_env(env, config, files)


def on_post_build(config):
    _builder.on_post_build(config)


def on_build_error(error):
    _builder.on_build_error(error)
